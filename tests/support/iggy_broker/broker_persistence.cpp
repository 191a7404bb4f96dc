// SPDX-License-Identifier: Apache-2.0
#include "iggy_broker/broker_internal.hpp"

namespace iss::broker {

// ---- the --data files: meta.json and one log file per partition

void broker_state::state::save_meta() {
    if (opts.data_dir.empty()) return;
    namespace json = boost::json;
    json::array ss;
    streams.for_each([&](std::size_t, const stream& s) {
        json::array ts;
        s.topics.for_each([&](std::size_t, const topic& t) {
            json::array ps;
            for (auto& p : t.partitions) {
                json::object co, go;
                for (auto& [k, v] : p.consumer_offsets) co[std::to_string(k)] = v;
                for (auto& [k, v] : p.group_offsets) go[std::to_string(k)] = v;
                ps.push_back(json::object{{"created_at", p.created_at}, {"consumers", co}, {"groups", go}});
            }
            json::array gs;
            const auto add_group = [&](std::size_t, const group& g) {
                gs.push_back(json::object{{"id", g.id}, {"name", g.name}});
            };
            t.groups.for_each(add_group);
            ts.push_back(json::object{{"id", t.id},
                                      {"name", t.name},
                                      {"created_at", t.created_at},
                                      {"compression", t.compression},
                                      {"message_expiry", t.message_expiry},
                                      {"max_topic_size", t.max_topic_size},
                                      {"replication_factor", t.replication_factor},
                                      {"partitions", ps},
                                      {"groups", gs}});
        });
        ss.push_back(json::object{{"id", s.id}, {"name", s.name}, {"created_at", s.created_at}, {"topics", ts}});
    });
    std::filesystem::create_directories(opts.data_dir);
    auto tmp = opts.data_dir / "meta.json.tmp";
    {
        std::ofstream f(tmp, std::ios::trunc);
        f << json::serialize(json::object{{"streams", ss}, {"users", users.to_json()}});
    }
    std::filesystem::rename(tmp, opts.data_dir / "meta.json");
}

std::string broker_state::state::load_meta() {
    namespace json = boost::json;
    auto path = opts.data_dir / "meta.json";
    if (!std::filesystem::exists(path)) return {};
    std::ifstream f(path);
    std::stringstream buf;
    buf << f.rdbuf();
    boost::system::error_code ec;
    auto v = json::parse(buf.str(), ec);
    if (ec) return "cannot parse " + path.string() + ": " + ec.message();
    try {
        for (auto& sv : v.at("streams").as_array()) {
            stream s;
            s.id = json::value_to<std::uint32_t>(sv.at("id"));
            s.name = json::value_to<std::string>(sv.at("name"));
            s.created_at = json::value_to<std::uint64_t>(sv.at("created_at"));
            for (auto& tv : sv.at("topics").as_array()) {
                topic t;
                t.id = json::value_to<std::uint32_t>(tv.at("id"));
                t.name = json::value_to<std::string>(tv.at("name"));
                t.created_at = json::value_to<std::uint64_t>(tv.at("created_at"));
                t.compression = json::value_to<std::uint8_t>(tv.at("compression"));
                t.message_expiry = json::value_to<std::uint64_t>(tv.at("message_expiry"));
                t.max_topic_size = json::value_to<std::uint64_t>(tv.at("max_topic_size"));
                t.replication_factor = json::value_to<std::uint8_t>(tv.at("replication_factor"));
                std::uint32_t pid = 0;
                for (auto& pv : tv.at("partitions").as_array()) {
                    partition p;
                    p.created_at = json::value_to<std::uint64_t>(pv.at("created_at"));
                    for (auto& [k, ov] : pv.at("consumers").as_object())
                        p.consumer_offsets[static_cast<std::uint32_t>(std::stoul(std::string{k}))] =
                            json::value_to<std::uint64_t>(ov);
                    for (auto& [k, ov] : pv.at("groups").as_object())
                        p.group_offsets[static_cast<std::uint32_t>(std::stoul(std::string{k}))] =
                            json::value_to<std::uint64_t>(ov);
                    // messages
                    auto file = partition_file(s.id, t.id, pid);
                    if (std::filesystem::exists(file)) {
                        std::ifstream in(file, std::ios::binary);
                        std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
                        std::size_t pos = 0;
                        while (pos + header_size <= bytes.size()) {
                            auto* h = reinterpret_cast<const std::uint8_t*>(bytes.data() + pos);
                            const std::size_t len = header_size + proto::load_le<std::uint32_t>(wire(h + 52)) +
                                                    proto::load_le<std::uint32_t>(wire(h + 48));
                            if (pos + len > bytes.size()) break;  // torn tail: dropped
                            std::memcpy(p.log->reserve(len), h, len);
                            p.log->commit(len, proto::load_le<std::uint64_t>(wire(h + 32)));
                            pos += len;
                        }
                        if (pos != bytes.size()) std::filesystem::resize_file(file, pos);
                    }
                    t.partitions.push_back(std::move(p));
                    ++pid;
                }
                for (auto& gv : tv.at("groups").as_array()) {
                    group g;
                    g.id = json::value_to<std::uint32_t>(gv.at("id"));
                    g.name = json::value_to<std::string>(gv.at("name"));
                    for (std::uint32_t i = 0; i < t.partitions.size(); ++i) g.partitions.push_back(i);
                    auto gid = g.id;
                    t.groups.insert_at(gid, std::move(g));
                }
                auto tid = t.id;
                s.topics.insert_at(tid, std::move(t));
            }
            auto sid = s.id;
            streams.insert_at(sid, std::move(s));
        }
        if (auto* u = v.as_object().if_contains("users")) {
            if (auto err = users.from_json(*u); !err.empty()) return "invalid " + path.string() + ": " + err;
        }
    } catch (const std::exception& e) {
        return "invalid " + path.string() + ": " + e.what();
    }
    return {};
}

}  // namespace iss::broker
