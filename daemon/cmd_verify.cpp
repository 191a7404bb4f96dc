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
#include "common/log.hpp"
#include "common/net/task_group.hpp"
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/run_to_exit.hpp"
#include "daemon/s3_setup.hpp"
#include "daemon/s3_wiring.hpp"
#include "daemon/wiring.hpp"
#include "format/key_template.hpp"
#include "iggy/error.hpp"
#include "pipeline/adapters/format_encoder.hpp"
#include "pipeline/adapters/iggy_ports.hpp"
#include "pipeline/adapters/key_namer.hpp"
#include "pipeline/verify.hpp"
#include "s3/client.hpp"

#include <boost/asio/io_context.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <set>

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

/// A partition's keys: `before` + the zero-padded first offset + `after`.
struct key_stem {
    pipeline::partition_ref partition;
    std::string before;
    std::string after;
};

key_stem stem_of(const pipeline::key_namer& namer, const pipeline::partition_ref& p) {
    const std::string a = namer.key(p, 0).get();
    const std::string b = namer.key(p, 1).get();
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    std::size_t j = 0;
    while (j < a.size() - i && j < b.size() - i && a[a.size() - 1 - j] == b[b.size() - 1 - j]) ++j;
    std::string before = a.substr(0, i);
    // Zero padding of the offset is part of the number, not of the stem.
    while (!before.empty() && before.back() == '0') before.pop_back();
    return {p, std::move(before), a.substr(a.size() - j)};
}

/// True when `key` is one of `s`'s keys (the middle is all digits).
bool matches(const key_stem& s, std::string_view key) {
    if (key.size() <= s.before.size() + s.after.size() || !key.starts_with(s.before) || !key.ends_with(s.after))
        return false;
    const auto mid = key.substr(s.before.size(), key.size() - s.before.size() - s.after.size());
    return std::all_of(mid.begin(), mid.end(), [](char c) { return c >= '0' && c <= '9'; });
}

struct target {
    key_stem stem;
    std::optional<std::uint64_t> committed;
    std::vector<std::string> keys;
    std::vector<pipeline::verified_object> objects;
    std::vector<std::string> unreadable;
};

/// The configured partitions (narrowed by the flags) with their committed offsets.
net::awaitable<result<std::vector<target>>> partitions_from_iggy(iggy::client& c, const config::sink_config& cfg,
                                                                 const verify_args& a, const pipeline::key_namer& namer,
                                                                 std::vector<std::string>& missing) {
    std::vector<target> out;
    const auto name = consumer_name(cfg);
    const auto consumer = cfg.iggy.group_mode() ? proto::consumer::group(proto::identifier::named(name))
                                                : proto::consumer::single(proto::identifier::named(name));
    for (const auto& src : consumer_options(cfg).sources) {
        if ((a.stream && *a.stream != src.topic.stream) || (a.topic && *a.topic != src.topic.topic)) continue;
        auto t =
            co_await c.get_topic(proto::identifier::named(src.topic.stream), proto::identifier::named(src.topic.topic));
        if (!t) co_return t.error();
        if (!*t) {
            missing.push_back(fmt::format("topic {}/{} not found on the server", src.topic.stream, src.topic.topic));
            continue;
        }
        for (const auto& p : (*t)->partitions) {
            if (src.partitions &&
                std::find(src.partitions->begin(), src.partitions->end(), p.id) == src.partitions->end())
                continue;
            if (a.partition && *a.partition != p.id) continue;
            auto off = co_await c.get_offset(consumer, proto::identifier::named(src.topic.stream),
                                             proto::identifier::named(src.topic.topic), p.id);
            if (!off) co_return off.error();
            target tg;
            tg.stem = stem_of(namer, {src.topic.stream, src.topic.topic, p.id});
            if (*off) tg.committed = (*off)->stored_offset;
            out.push_back(std::move(tg));
        }
    }
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
};

/// HEADs jobs from `q` until none is left; the first store error ends this worker.
net::awaitable<std::optional<error>> head_worker(s3::client* s3, std::string bucket, std::vector<head_job>* q,
                                                 std::size_t* next) {
    while (*next < q->size()) {
        head_job& j = (*q)[(*next)++];
        auto h = co_await s3->head_object(bucket, j.key);
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

net::awaitable<int> verify_main(config::sink_config cfg, iggy::client_options iopts, verify_args a) {
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

    if (auto v = s3::validate(s3_options(cfg)); !v) {
        print_error("verify", "s3: {}", v.error());
        co_return exit_config;
    }
    // The proxy and the credential chain of `run` (an instance role, web identity, ...).
    auto sopts = co_await s3_client_options(ex, cfg);
    if (!sopts) {
        print_error("verify", "s3: {}", sopts.error().message());
        co_return exit_failure;
    }
    s3::client s3c{ex, std::move(*sopts)};
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
    for (auto& t : *targets)
        reports.push_back(
            pipeline::verify_partition(t.stem.partition, std::move(t.objects), t.committed, std::move(t.unreadable)));
    if (auto code = co_await account_bad_messages(cfg, iopts, reports, namer, encoders)) co_return *code;
    std::vector<std::string> problems = missing;
    std::uint64_t refused = 0;
    for (const auto& r : reports) {
        for (auto& p : pipeline::describe_problems(r)) problems.push_back(std::move(p));
        refused += r.refused;
    }
    if (a.json) {
        fmt::print("{}", pipeline::render_verify_json(reports, max_problems));
    } else {
        fmt::print("{}", pipeline::render_verify_table(reports));
        fmt::print("{} objects listed under s3://{}/{}, {} read\n", listed, bucket, prefix, jobs.size());
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
            fmt::print("ok: every offset from the lowest present up to the committed one is in exactly one object\n");
        }
    }
    for (const auto& m : missing) print_error("verify", "{}", m);
    std::fflush(stdout);
    co_return problems.empty() ? exit_ok : exit_failure;
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
                  "from Iggy and counted as accounted for, not as gaps.",
                  "  0   every offset from the lowest present up to the committed one is in exactly one object\n"
                  "  1   otherwise (the first 20 problems are listed), or the store or Iggy refused the\n"
                  "      request (S3 AccessDenied, NoSuchBucket; Iggy credentials refused)\n"
                  "  64  usage error\n"
                  "  69  the store or Iggy cannot be reached\n"
                  "  78  invalid configuration");
    return [a] { return run_verify(*a); };
}

}  // namespace iss::app
