// SPDX-License-Identifier: Apache-2.0
// `iggy-s3-sink verify --config FILE [--json] [--stream S --topic T --partition P]`: reads the
// bucket the way the config lays it out and proves, per partition, that every offset from
// the lowest one present up to the committed one is in exactly one object
// (pipeline/verify.hpp says what counts as a problem).
//
// How: for each configured partition, the key template is rendered at two first offsets;
// the common part before and after the offset is that partition's key stem. One listing under
// the longest prefix shared by the stems finds the objects; each matching key is HEADed (at
// most `parallel_heads` at once) for its range metadata. Iggy gives the partitions and the
// committed offsets. Exit 0 all fine, 1 problems (the first 20 listed) or a refusal (S3 403,
// Iggy credentials refused), 69 store or Iggy not reachable, 78 invalid configuration.
//
// With `iceberg` set, the tables are what is verified (verify_tables.hpp): each distinct table
// of the configured topics is read once; its current snapshot (the manifest list and manifests,
// read from the store) gives the data files, attributed to the topics by their names; each is
// HEADed for its range; per partition, every offset from the lowest present up to the one
// before the summary's `iggy-s3-sink.offsets` must be in exactly one data file (a file
// registered twice is an overlap). A data file of no configured topic (another writer's) is a
// note. Gaps are read back from Iggy as the bucket's are (refused messages are accounted for).
#include "common/log.hpp"
#include "common/net/task_group.hpp"
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/iceberg_run.hpp"
#include "daemon/run_to_exit.hpp"
#include "daemon/s3_setup.hpp"
#include "daemon/s3_wiring.hpp"
#include "daemon/verify_keys.hpp"
#include "daemon/verify_tables.hpp"
#include "daemon/wiring.hpp"
#include "format/key_template.hpp"
#include "format/writer.hpp"
#include "iceberg/partition.hpp"
#include "iceberg/schema.hpp"
#include "iggy/error.hpp"
#include "pipeline/adapters/format_encoder.hpp"
#include "pipeline/adapters/iceberg_key_namer.hpp"
#include "pipeline/adapters/iceberg_plan.hpp"
#include "pipeline/adapters/iggy_ports.hpp"
#include "pipeline/adapters/key_namer.hpp"
#include "pipeline/verify.hpp"
#include "s3/client.hpp"

#include <boost/asio/io_context.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <variant>

namespace iss::app {

namespace {
namespace net = boost::asio;

constexpr std::size_t parallel_heads = 32;
constexpr std::size_t max_problems = 20;
/// At most this many messages of a partition's gaps are read back to find refused ones.
constexpr std::uint64_t max_checked_per_partition = 100'000;

struct verify_args {
    std::string config_file;
    bool json = false;
    std::optional<std::string> stream, topic;
    std::optional<std::uint32_t> partition;
};

struct target {
    key_stem stem;
    std::optional<std::uint64_t> committed;
    std::vector<std::string> keys;
    std::vector<pipeline::verified_object> objects;
    std::vector<std::string> unreadable;
    /// An Iceberg table's partition: its data files' groups (partition paths) and manifest
    /// row counts, by key (pipeline::verify_table_partition judges it).
    bool table = false;
    std::map<std::string, std::pair<std::string, std::int64_t>> table_files;
};

/// The problem when --stream/--topic name no configured topic.
std::string unmatched_source(const verify_args& a) {
    const std::string what = a.stream && a.topic ? fmt::format("topic {}/{}", *a.stream, *a.topic)
                             : a.stream          ? fmt::format("stream {}", *a.stream)
                             : a.topic           ? fmt::format("topic {}", *a.topic)
                                                 : std::string{"the configuration"};
    return fmt::format("{}: no configured topic matches (the config's topics are all verify can check)", what);
}

/// The configured partitions (narrowed by the flags) with their committed offsets.
net::awaitable<result<std::vector<target>>> partitions_from_iggy(iggy::client& c, const config::sink_config& cfg,
                                                                 const verify_args& a, const pipeline::key_namer& namer,
                                                                 std::vector<std::string>& missing) {
    std::vector<target> out;
    const auto name = consumer_name(cfg);
    const auto consumer = cfg.iggy.group_mode() ? proto::consumer::group(proto::identifier::named(name))
                                                : proto::consumer::single(proto::identifier::named(name));
    bool any_source = false;
    std::vector<std::string> unknown_partition;  // --partition, per topic that lacks it
    for (const auto& src : consumer_options(cfg).sources) {
        if ((a.stream && *a.stream != src.topic.stream) || (a.topic && *a.topic != src.topic.topic)) continue;
        any_source = true;
        auto t =
            co_await c.get_topic(proto::identifier::named(src.topic.stream), proto::identifier::named(src.topic.topic));
        if (!t) co_return t.error();
        if (!*t) {
            missing.push_back(fmt::format("topic {}/{} not found on the server", src.topic.stream, src.topic.topic));
            continue;
        }
        const auto before = out.size();
        for (const auto& p : (*t)->partitions) {
            if (src.partitions &&
                std::find(src.partitions->begin(), src.partitions->end(), p.id) == src.partitions->end())
                continue;
            if (a.partition && *a.partition != p.id) continue;
            auto off = co_await c.get_offset(consumer, proto::identifier::named(src.topic.stream),
                                             proto::identifier::named(src.topic.topic), p.id);
            if (!off) co_return off.error();
            target tg;
            tg.stem = stem_of(namer, {src.topic.stream, src.topic.topic, p.id}, (*t)->topic.created_at);
            if (*off) tg.committed = (*off)->stored_offset;
            out.push_back(std::move(tg));
        }
        if (out.size() == before && a.partition) {
            const auto& ps = (*t)->partitions;
            const bool on_server =
                std::any_of(ps.begin(), ps.end(), [&](const auto& p) { return p.id == *a.partition; });
            unknown_partition.push_back(
                on_server ? fmt::format("partition {} of {}/{} is not among the configured partitions", *a.partition,
                                        src.topic.stream, src.topic.topic)
                          : fmt::format("partition {} of {}/{} not found on the server (the topic has {})",
                                        *a.partition, src.topic.stream, src.topic.topic, ps.size()));
        } else if (out.size() == before)
            missing.push_back(fmt::format("topic {}/{} has no partition to verify", src.topic.stream, src.topic.topic));
    }
    if (!any_source) missing.push_back(unmatched_source(a));
    // Without --topic, --partition names the partition of whichever topics have it.
    if (a.topic || out.empty()) missing.insert(missing.end(), unknown_partition.begin(), unknown_partition.end());
    co_return out;
}

std::string common_prefix(const std::vector<target>& ts) {
    if (ts.empty()) return {};
    std::string p = ts.front().stem.before;
    for (const auto& t : ts) {
        std::size_t i = 0;
        while (i < p.size() && i < t.stem.before.size() && p[i] == t.stem.before[i]) ++i;
        p.resize(i);
    }
    return p;
}

struct head_job {
    target* t;
    std::string key;
    std::string bucket;  ///< "" = the configured bucket
};

/// HEADs jobs from `q` until none is left; the first store error ends this worker.
net::awaitable<std::optional<error>> head_worker(s3::client* s3, std::string bucket, std::vector<head_job>* q,
                                                 std::size_t* next) {
    while (*next < q->size()) {
        head_job& j = (*q)[(*next)++];
        auto h = co_await s3->head_object(j.bucket.empty() ? bucket : j.bucket, j.key);
        if (!h) {
            if (h.error() == s3::errc::no_such_key) continue;  // deleted since the listing
            co_return h.error();
        }
        auto range = pipeline::from_user_metadata(h->metadata);
        if (range) j.t->objects.push_back({j.key, *range});
        else j.t->unreadable.push_back(j.key);
    }
    co_return std::nullopt;
}

/// The offsets of `spans` of `p` whose messages the format refuses (pipeline/verify.hpp says
/// why that accounts for them), read from Iggy by a consumer of verify's own without storing
/// anything; at most max_checked_per_partition messages. Offsets Iggy no longer holds are left out.
net::awaitable<result<std::set<std::uint64_t>>> refused_offsets(iggy::client& c, pipeline::partition_ref p,
                                                                std::vector<pipeline::offset_span> spans,
                                                                const pipeline::key_namer& namer,
                                                                const pipeline::encoder_factory& encoders) {
    std::set<std::uint64_t> out;
    std::unique_ptr<pipeline::record_encoder> encoder;
    std::string buf;
    std::uint64_t checked = 0;
    const auto consumer = proto::consumer::single(proto::identifier::named("iggy-s3-sink-verify"));
    for (const auto& s : spans) {
        std::uint64_t from = s.first;
        while (from <= s.last && checked < max_checked_per_partition) {
            const auto count = static_cast<std::uint32_t>(
                std::min<std::uint64_t>({s.last - from + 1, 1000, max_checked_per_partition - checked}));
            auto b = co_await c.poll_messages(consumer, proto::identifier::named(p.stream),
                                              proto::identifier::named(p.topic), p.partition,
                                              proto::polling_strategy::at_offset(from), count, false);
            if (!b) co_return b.error();
            std::uint64_t next = from;
            for (const auto& v : b->messages) {
                if (v.offset < from || v.offset > s.last) continue;
                ++checked;
                if (pipeline::refused_by_format(namer, encoders, encoder, buf, p, pipeline::message_of(v)))
                    out.insert(v.offset);
                next = v.offset + 1;
            }
            if (next == from) break;  // nothing there any more (retention): it stays a gap
            from = next;
        }
    }
    co_return out;
}

/// Finds the refused messages among the reports' gaps (a second, short Iggy session) and
/// accounts for them; nullopt when done, else the exit code.
net::awaitable<std::optional<int>> account_bad_messages(const config::sink_config& cfg, iggy::client_options iopts,
                                                        std::vector<pipeline::partition_report>& reports,
                                                        const pipeline::key_namer& namer,
                                                        const pipeline::encoder_factory& encoders) {
    if (std::all_of(reports.begin(), reports.end(),
                    [](const auto& r) { return pipeline::unaccounted_spans(r).empty(); }))
        co_return std::nullopt;
    iggy::client c{co_await net::this_coro::executor, std::move(iopts)};
    if (auto r = co_await c.connect(); !r) {
        print_error("verify", "{}", iggy_connect_failure(cfg.iggy.address, r.error()));
        co_await c.close();
        co_return iggy_exit_code(r.error());
    }
    for (auto& rep : reports) {
        auto spans = pipeline::unaccounted_spans(rep);
        if (spans.empty()) continue;
        auto refused = co_await refused_offsets(c, rep.partition, std::move(spans), namer, encoders);
        if (!refused) {
            print_error("verify", "reading the gaps of {} from Iggy: {}", rep.partition,
                        iggy::describe(refused.error()));
            co_await c.close();
            co_return iggy_exit_code(refused.error());
        }
        pipeline::account_refused(rep, *refused);
    }
    co_await c.close();
    co_return std::nullopt;
}

/// What verify needs to read the gaps back from Iggy (account_bad_messages).
struct gap_reader {
    const config::sink_config& cfg;
    const iggy::client_options& iopts;
    const pipeline::key_namer& namer;
    const pipeline::encoder_factory& encoders;
};

/// HEADs `jobs` (at most parallel_heads at once), judges each target, accounts for refused
/// messages in the gaps (`gaps`) and prints the report. `notes`: the `s3://` paths of a
/// table's data files another writer added (listed, counted, not problems).
net::awaitable<int> head_and_report(s3::client& s3c, const std::string& bucket, std::vector<target>& targets,
                                    std::vector<head_job>& jobs, std::vector<std::string> missing, const verify_args& a,
                                    std::string listed_line, std::string ok_line, const gap_reader* gaps,
                                    std::vector<std::string> notes = {}) {
    auto ex = co_await net::this_coro::executor;
    // HEAD every object, at most parallel_heads at once; the workers share one queue.
    std::size_t next = 0;
    std::optional<error> failure;
    {
        const std::size_t workers = std::min(parallel_heads, jobs.size());
        iss::task_group group{ex};
        for (std::size_t i = 0; i < workers; ++i) {
            group.spawn(head_worker(&s3c, bucket, &jobs, &next), [&](std::optional<error> err) {
                if (err && !failure) {
                    failure = std::move(err);
                    next = jobs.size();  // the others stop after their current HEAD
                }
            });
        }
        co_await group.wait();  // rethrows the first worker's exception
    }
    if (failure) {
        print_error("verify", "HEAD in s3://{}: {}", bucket, *failure);
        co_return s3_exit_code(*failure);
    }

    std::vector<pipeline::partition_report> reports;
    for (auto& t : targets) {
        if (t.table) {
            std::vector<pipeline::verified_table_file> files;
            for (auto& o : t.objects) {
                const auto& [group, rows] = t.table_files.at(o.key);
                files.push_back({std::move(o.key), group, o.range, rows});
            }
            reports.push_back(pipeline::verify_table_partition(t.stem.partition, std::move(files), t.committed,
                                                               std::move(t.unreadable)));
        } else {
            reports.push_back(pipeline::verify_partition(t.stem.partition, std::move(t.objects), t.committed,
                                                         std::move(t.unreadable)));
        }
    }
    if (gaps != nullptr) {
        if (auto code = co_await account_bad_messages(gaps->cfg, gaps->iopts, reports, gaps->namer, gaps->encoders))
            co_return *code;
    }
    std::vector<std::string> problems = missing;
    std::uint64_t refused = 0;
    for (const auto& r : reports) {
        for (auto& p : pipeline::describe_problems(r)) problems.push_back(std::move(p));
        refused += r.refused;
    }
    if (a.json) {
        fmt::print("{}", pipeline::render_verify_json(reports, max_problems, notes));
    } else {
        fmt::print("{}", pipeline::render_verify_table(reports));
        fmt::print("{}\n", listed_line);
        if (!notes.empty()) {
            fmt::print("{} data file{} not written by this sink (another writer's: not verified){}:\n", notes.size(),
                       notes.size() == 1 ? "" : "s",
                       notes.size() > max_problems ? fmt::format(", the first {}", max_problems) : "");
            for (std::size_t i = 0; i < notes.size() && i < max_problems; ++i) fmt::print("  note: {}\n", notes[i]);
        }
        if (refused > 0)
            fmt::print(
                "{} offset{} in no object: the format refuses {} message{} (passed by delivery.on_bad_message "
                "skip or dead_letter): accounted for\n",
                refused, refused == 1 ? " is" : "s are", refused == 1 ? "its" : "their", refused == 1 ? "" : "s");
        if (!problems.empty()) {
            fmt::print("{} problem{}{}:\n", problems.size(), problems.size() == 1 ? "" : "s",
                       problems.size() > max_problems ? fmt::format(" (the first {})", max_problems) : "");
            for (std::size_t i = 0; i < problems.size() && i < max_problems; ++i) fmt::print("  {}\n", problems[i]);
        } else {
            fmt::print("ok: {}\n", ok_line);
        }
    }
    for (const auto& m : missing) print_error("verify", "{}", m);
    std::fflush(stdout);
    co_return problems.empty() ? exit_ok : exit_failure;
}

/// The S3 client options `run` connects with (`s3_client_options`: the proxy and the credential
/// chain of an instance role, web identity, ...), or the exit code after saying why on stderr:
/// 78 for options the client refuses, 1 when the credentials cannot be had. `cfg` is the
/// caller's, awaited at once.
net::awaitable<std::variant<int, s3::client_options>> verify_s3_options(net::any_io_executor ex,
                                                                        const config::sink_config& cfg) {
    if (auto v = s3::validate(s3_options(cfg)); !v) {
        print_error("verify", "s3: {}", v.error());
        co_return exit_config;
    }
    auto sopts = co_await s3_client_options(ex, cfg);
    if (!sopts) {
        print_error("verify", "s3: {}", sopts.error().message());
        co_return exit_failure;
    }
    co_return std::move(*sopts);
}

/// `verify` with `iceberg` set: the configured topics' tables (verify_tables.hpp). Gaps are
/// read back from Iggy like the bucket's (account_bad_messages), with the namer of the tables.
net::awaitable<int> verify_tables(config::sink_config cfg, iggy::client_options iopts, verify_args a) {
    auto ex = co_await net::this_coro::executor;
    const auto cols = format::effective_schema(writer_options(cfg));
    auto schema = iceberg::make_schema(cols);
    auto spec = schema ? iceberg::parse_partition_by(cfg.iceberg.partition_by, *schema)
                       : result<iceberg::partition_spec>{schema.error()};
    if (!spec) {
        print_error("verify", "iceberg: {}", spec.error().message());
        co_return exit_config;
    }
    const pipeline::iceberg_key_namer namer{cols, *spec, iceberg::s3_location{cfg.s3.bucket.get(), ""}};
    const pipeline::format_encoders encoders{writer_options(cfg), cfg.iggy.verify_checksum};
    auto sopts = co_await verify_s3_options(ex, cfg);
    if (const int* code = std::get_if<int>(&sopts)) co_return *code;
    table_reader tables{ex, cfg, std::get<s3::client_options>(sopts)};
    s3::client s3c{ex, std::move(std::get<s3::client_options>(sopts))};
    pipeline::s3_table_files store{s3c};
    const table_selection selection{a.stream, a.topic, a.partition};
    auto read = co_await read_tables(tables, store, cfg, selection);
    if (const int* code = std::get_if<int>(&read)) co_return *code;
    auto& r = std::get<tables_read>(read);
    if (!r.any_source) {
        print_error("verify", "{}", unmatched_source(a));
        co_return exit_failure;
    }
    // One target per partition the summary or a data file names.
    std::map<pipeline::partition_ref, target> by_partition;
    for (const auto& [p, c] : r.committed) by_partition[p].committed = c;
    for (const auto& f : r.files) {
        auto& tg = by_partition[f.p];
        // A file listed twice keeps both listings (a duplicate is what verify looks for).
        const auto slash = f.key.rfind('/');
        tg.table_files.try_emplace(f.key, f.key.substr(0, slash == std::string::npos ? 0 : slash), f.rows);
    }
    std::vector<target> targets;
    std::map<pipeline::partition_ref, std::size_t> index;
    for (auto& [p, tg] : by_partition) {
        tg.stem.partition = p;
        tg.table = true;
        index[p] = targets.size();
        targets.push_back(std::move(tg));
    }
    std::vector<head_job> jobs;
    for (const auto& f : r.files) jobs.push_back({&targets[index.at(f.p)], f.key, f.bucket});
    const gap_reader readers{cfg, iopts, namer, encoders};
    co_return co_await head_and_report(
        s3c, cfg.s3.bucket.get(), targets, jobs, std::move(r.problems), a,
        fmt::format("{} data files in the current snapshot{} of {} table{}, {} read", r.listed,
                    r.tables == 1 ? "" : "s", r.tables, r.tables == 1 ? "" : "s", jobs.size()),
        "every offset from the lowest present up to the table's committed one (its summary's iggy-s3-sink.offsets) "
        "is in exactly one data file of the current snapshot",
        &readers, std::move(r.foreign));
}

net::awaitable<int> verify_main(config::sink_config cfg, iggy::client_options iopts, verify_args a) {
    if (cfg.iceberg.enabled) co_return co_await verify_tables(std::move(cfg), std::move(iopts), std::move(a));
    auto ex = co_await net::this_coro::executor;
    // The key namer and the format of `run`: the keys to look for, and what a bad message is.
    const pipeline::format_encoders encoders{writer_options(cfg), cfg.iggy.verify_checksum};
    auto full_namer = key_namer(cfg, encoders.extension());
    if (!full_namer) {
        print_error("verify", "{}", full_namer.error());
        co_return exit_config;
    }
    const pipeline::template_key_namer& namer = **full_namer;

    iggy::client c{ex, iopts};
    if (auto r = co_await c.connect(); !r) {
        print_error("verify", "{}", iggy_connect_failure(cfg.iggy.address, r.error()));
        co_await c.close();
        co_return iggy_exit_code(r.error());
    }
    std::vector<std::string> missing;
    auto targets = co_await partitions_from_iggy(c, cfg, a, namer, missing);
    co_await c.close();
    if (!targets) {
        print_error("verify", "Iggy: {}", iggy::describe(targets.error()));
        co_return iggy_exit_code(targets.error());
    }

    if (targets->empty()) {  // nothing of the flags' exists: no listing (an empty prefix is the whole bucket)
        for (const auto& m : missing) print_error("verify", "{}", m);
        co_return exit_failure;
    }

    auto sopts = co_await verify_s3_options(ex, cfg);
    if (const int* code = std::get_if<int>(&sopts)) co_return *code;
    s3::client s3c{ex, std::move(std::get<s3::client_options>(sopts))};
    const std::string bucket = cfg.s3.bucket.get();
    const std::string prefix = common_prefix(*targets);
    std::size_t listed = 0;
    std::vector<head_job> jobs;
    s3::list_options lo;
    lo.prefix = prefix;
    for (;;) {
        auto page = co_await s3c.list_objects_v2(bucket, lo);
        if (!page) {
            print_error("verify", "listing s3://{}/{}: {}", bucket, prefix, page.error());
            co_return s3_exit_code(page.error());
        }
        for (const auto& o : page->objects) {
            ++listed;
            for (auto& t : *targets) {
                if (matches(t.stem, o.key)) {
                    jobs.push_back({&t, o.key});
                    break;
                }
            }
        }
        if (!page->truncated || page->next_continuation_token.empty()) break;
        lo.continuation_token = page->next_continuation_token;
    }

    const gap_reader readers{cfg, iopts, namer, encoders};
    co_return co_await head_and_report(
        s3c, bucket, *targets, jobs, std::move(missing), a,
        fmt::format("{} objects listed under s3://{}/{}, {} read", listed, bucket, prefix, jobs.size()),
        "every offset from the lowest present up to the committed one is in exactly "
        "one object",
        &readers);
}

int run_verify(const verify_args& a) {
    return run_report_tool(
        "verify", a.config_file, iss::log::level::error,
        [&a](const config::sink_config& cfg, const iggy::client_options& opts) { return verify_main(cfg, opts, a); });
}

}  // namespace

command_main define_verify(CLI::App& sub) {
    auto a = std::make_shared<verify_args>();
    add_config_option(sub, a->config_file);
    sub.add_flag("--json", a->json, "one JSON object instead of the table");
    sub.add_option("--stream", a->stream, "only this stream (narrows the configured sources)")->type_name("S");
    sub.add_option("--topic", a->topic, "only this topic")->type_name("T");
    sub.add_option("--partition", a->partition, "only this partition id")->type_name("P");
    set_help_text(sub,
                  "Lists the bucket under the key template's fixed prefix, reads every object's range metadata\n"
                  "(x-amz-meta-iggy-first-offset / -last-offset) and, per configured partition, reports the\n"
                  "objects, the offsets covered, gaps, overlaps (an offset in two objects) and the committed\n"
                  "offset against the highest durable one. Offsets in no object whose messages the format\n"
                  "refuses (bad messages passed by delivery.on_bad_message skip or dead_letter) are read back\n"
                  "from Iggy and counted as accounted for, not as gaps. With iceberg set, the configured\n"
                  "topics' tables are verified instead (each read once, however many topics share it): every\n"
                  "offset up to the one its current snapshot's summary records (iggy-s3-sink.offsets) must\n"
                  "be in exactly one data file of that snapshot, none twice; data files this sink did not\n"
                  "write (another writer's) are listed as notes, not problems.",
                  "  0   every offset from the lowest present up to the committed one is in exactly one object\n"
                  "  1   otherwise (the first 20 problems are listed), or the store or Iggy refused the\n"
                  "      request (S3 AccessDenied, NoSuchBucket; Iggy credentials refused)\n"
                  "  64  usage error\n"
                  "  69  the store or Iggy cannot be reached\n"
                  "  78  invalid configuration");
    return [a] { return run_verify(*a); };
}

}  // namespace iss::app
