// SPDX-License-Identifier: Apache-2.0
#include "pipeline/verify.hpp"

#include "common/log.hpp"
#include "common/text_table.hpp"

#include <algorithm>
#include <array>
#include <map>

namespace iss::pipeline {

partition_report verify_partition(partition_ref p, std::vector<verified_object> objects,
                                  std::optional<std::uint64_t> committed, std::vector<std::string> unreadable) {
    partition_report r;
    r.partition = std::move(p);
    r.objects = objects.size() + unreadable.size();
    r.committed = committed;
    r.unreadable = std::move(unreadable);
    std::sort(objects.begin(), objects.end(), [](const verified_object& a, const verified_object& b) {
        return std::tie(a.range.first_offset, a.range.last_offset, a.key) <
               std::tie(b.range.first_offset, b.range.last_offset, b.key);
    });
    std::optional<std::uint64_t> covered;  // highest offset covered so far
    std::string holder;                    // the object that covers it
    for (const auto& o : objects) {
        const auto& rg = o.range;
        if (!r.lowest) r.lowest = rg.first_offset;
        if (covered) {
            if (rg.first_offset > *covered + 1) {
                r.gaps.push_back({*covered + 1, rg.first_offset - 1, holder, o.key});
            } else if (rg.first_offset <= *covered) {
                r.overlaps.push_back({rg.first_offset, std::min(rg.last_offset, *covered), holder, o.key});
            }
        }
        if (!covered || rg.last_offset > *covered) {
            covered = rg.last_offset;
            holder = o.key;
        }
    }
    r.highest = covered;
    // Gaps above the committed offset are not (yet) problems: nothing up there was promised.
    if (committed) {
        std::erase_if(r.gaps, [&](const offset_span& g) { return g.first > *committed; });
        for (auto& g : r.gaps) g.last = std::min(g.last, *committed);
        if (!covered || *covered < *committed) {
            const std::uint64_t from = covered ? *covered + 1 : 0;
            r.committed_missing = offset_span{from, *committed, covered ? holder : std::string{}, {}};
        }
    }
    return r;
}

std::vector<offset_span> unaccounted_spans(const partition_report& r) {
    std::vector<offset_span> out = r.gaps;
    if (r.committed_missing) out.push_back(*r.committed_missing);
    return out;
}

bool refused_by_format(const key_namer& namer, const encoder_factory& encoders,
                       std::unique_ptr<record_encoder>& encoder, std::string& buf, const partition_ref& p,
                       const message& m) {
    if (!namer.encode(p, m)) return true;
    if (!encoder || buf.size() > (1U << 20)) {
        encoder = encoders.make();
        buf.clear();
        encoder->begin(buf);
    }
    if (encoder->append(m, p, buf)) return false;
    encoder.reset();  // what a refusal leaves inside is not for the next message
    return true;
}

void account_refused(partition_report& r, const std::set<std::uint64_t>& refused) {
    // Splits `s` around the refused offsets in it; returns the pieces left, counts the rest.
    const auto split = [&](const offset_span& s) {
        std::vector<offset_span> left;
        std::uint64_t from = s.first;
        for (auto it = refused.lower_bound(s.first); it != refused.end() && *it <= s.last; ++it) {
            if (*it > from) left.push_back({from, *it - 1, s.before, s.after});
            from = *it + 1;
            ++r.refused;
        }
        if (from <= s.last && from >= s.first) left.push_back({from, s.last, s.before, s.after});
        return left;
    };
    std::vector<offset_span> gaps;
    for (const auto& g : r.gaps)
        for (auto& piece : split(g)) gaps.push_back(std::move(piece));
    r.gaps = std::move(gaps);
    if (r.committed_missing) {
        const auto left = split(*r.committed_missing);
        if (left.empty()) {
            r.committed_missing.reset();
        } else {
            r.committed_missing->first = left.front().first;  // committed but in no object, refused ones aside
            r.committed_missing->last = left.back().last;
        }
    }
}

partition_report verify_table_partition(partition_ref p, std::vector<verified_table_file> files,
                                        std::optional<std::uint64_t> committed, std::vector<std::string> unreadable) {
    std::vector<verified_object> all;
    std::map<std::string, std::vector<verified_object>> by_group;
    std::vector<std::string> miscounted;
    for (auto& f : files) {
        if (f.record_count < 0 || static_cast<std::uint64_t>(f.record_count) != f.range.count)
            miscounted.push_back(fmt::format("{} has {} rows in the table's manifest, {} in its object's metadata",
                                             f.key, f.record_count, f.range.count));
        all.push_back({f.key, f.range});
        by_group[f.group].push_back({std::move(f.key), f.range});
    }
    // Coverage (gaps, the committed offset) over every file; overlaps within a group only.
    auto r = verify_partition(p, std::move(all), committed, std::move(unreadable));
    r.overlaps.clear();
    for (auto& [group, objects] : by_group) {
        auto g = verify_partition(p, std::move(objects), std::nullopt);
        for (auto& o : g.overlaps) r.overlaps.push_back(std::move(o));
    }
    r.miscounted = std::move(miscounted);
    return r;
}

std::vector<std::string> describe_problems(const partition_report& r) {
    std::vector<std::string> out;
    const auto name = fmt::format("{}/{}/{}", r.partition.stream, r.partition.topic, r.partition.partition);
    for (const auto& g : r.gaps)
        out.push_back(fmt::format("{}: gap: offsets {}..{} are in no object (after {}, before {})", name, g.first,
                                  g.last, g.before.empty() ? "-" : g.before, g.after.empty() ? "-" : g.after));
    for (const auto& o : r.overlaps)
        out.push_back(fmt::format("{}: duplicate offsets {}..{} are in two objects: {} and {}", name, o.first, o.last,
                                  o.before, o.after));
    if (r.committed_missing) {
        const auto& m = *r.committed_missing;
        out.push_back(
            fmt::format("{}: committed offset {} is beyond the highest durable offset {}: offsets {}..{} "
                        "were committed but are in no object",
                        name, m.last, r.highest ? std::to_string(*r.highest) : std::string{"(none)"}, m.first, m.last));
    }
    for (const auto& k : r.unreadable)
        out.push_back(fmt::format("{}: {} has no usable x-amz-meta-iggy-* range metadata", name, k));
    for (const auto& m : r.miscounted) out.push_back(fmt::format("{}: {}", name, m));
    return out;
}

namespace {
std::string opt(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : std::string{"-"}; }
}  // namespace

std::string render_verify_table(const std::vector<partition_report>& rs) {
    std::vector<std::vector<std::string>> cells;
    cells.push_back(
        {"STREAM", "TOPIC", "PARTITION", "OBJECTS", "LOWEST", "HIGHEST", "COMMITTED", "GAPS", "OVERLAPS", "STATUS"});
    for (const auto& r : rs)
        cells.push_back({r.partition.stream, r.partition.topic, std::to_string(r.partition.partition),
                         std::to_string(r.objects), opt(r.lowest), opt(r.highest), opt(r.committed),
                         std::to_string(r.gaps.size() + (r.committed_missing ? 1 : 0)),
                         std::to_string(r.overlaps.size()), r.ok() ? "ok" : "PROBLEM"});
    using enum text_align;  // numbers right-aligned
    static constexpr std::array align{left, left, right, right, right, right, right, right, right, left};
    return render_text_table(cells, align);
}

std::string render_verify_json(const std::vector<partition_report>& rs, std::size_t max_problems,
                               const std::vector<std::string>& notes) {
    const auto num = [](const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : std::string{"null"}; };
    const auto spans = [](const std::vector<offset_span>& v) {
        std::string s = "[";
        for (std::size_t i = 0; i < v.size(); ++i) s += fmt::format("{}[{},{}]", i ? "," : "", v[i].first, v[i].last);
        return s + "]";
    };
    std::string out = "{\"partitions\":[";
    std::vector<std::string> problems;
    bool all = true;
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const auto& r = rs[i];
        all = all && r.ok();
        for (auto& p : describe_problems(r)) problems.push_back(std::move(p));
        auto gaps = r.gaps;
        if (r.committed_missing) gaps.push_back(*r.committed_missing);
        out += i ? ",{\"stream\":\"" : "{\"stream\":\"";
        iss::log::append_json_escaped(out, r.partition.stream);
        out += "\",\"topic\":\"";
        iss::log::append_json_escaped(out, r.partition.topic);
        out += fmt::format(
            "\",\"partition\":{},\"objects\":{},\"lowest\":{},\"highest\":{},\"committed\":{},\"gaps\":{},"
            "\"overlaps\":{},\"refused\":{},\"ok\":{}}}",
            r.partition.partition, r.objects, num(r.lowest), num(r.highest), num(r.committed), spans(gaps),
            spans(r.overlaps), r.refused, r.ok() ? "true" : "false");
    }
    out += "],\"problems\":[";
    for (std::size_t i = 0; i < problems.size() && i < max_problems; ++i) {
        out += i ? ",\"" : "\"";
        iss::log::append_json_escaped(out, problems[i]);
        out += "\"";
    }
    out += fmt::format("],\"problem_count\":{},\"notes\":[", problems.size());
    for (std::size_t i = 0; i < notes.size() && i < max_problems; ++i) {
        out += i ? ",\"" : "\"";
        iss::log::append_json_escaped(out, notes[i]);
        out += "\"";
    }
    out += fmt::format("],\"note_count\":{},\"ok\":{}}}\n", notes.size(), all ? "true" : "false");
    return out;
}

}  // namespace iss::pipeline
