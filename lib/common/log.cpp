// SPDX-License-Identifier: Apache-2.0
#include "common/log.hpp"

#include "common/journal.hpp"
#include "common/rfc3339.hpp"
#include "common/utf8.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace iss::log {
namespace {

std::atomic<level> g_level{level::info};
std::atomic<output_format> g_format{output_format::text};
std::atomic<const iss::clock*> g_clock{nullptr};
std::atomic<bool> g_prefix{false};
std::mutex g_sink_mu;
std::function<void(std::string_view)> g_sink;  // guarded by g_sink_mu

bool needs_quotes(std::string_view v) {
    if (v.empty()) return true;
    for (unsigned char c : v) {
        if (c <= 0x20 || c == '"' || c == '=' || c == 0x7f) return true;
    }
    return false;
}

void append_text_value(std::string& out, std::string_view v) {
    if (!needs_quotes(v)) {
        out += v;
        return;
    }
    out += '"';
    append_json_escaped(out, v);
    out += '"';
}

void append_json_field(std::string& out, std::string_view k, std::string_view v) {
    out += ",\"";
    append_json_escaped(out, k);
    out += "\":\"";
    append_json_escaped(out, v);
    out += '"';
}

}  // namespace

std::string_view to_string(level l) noexcept {
    switch (l) {
        case level::trace: return "trace";
        case level::debug: return "debug";
        case level::info: return "info";
        case level::warn: return "warn";
        case level::error: return "error";
        case level::off: return "off";
    }
    return "?";
}

std::optional<level> parse_level(std::string_view s) noexcept {
    for (auto l : {level::trace, level::debug, level::info, level::warn, level::error, level::off}) {
        if (s == to_string(l)) return l;
    }
    if (s == "warning") return level::warn;
    return std::nullopt;
}

std::optional<output_format> parse_format(std::string_view s) noexcept {
    if (s == "text") return output_format::text;
    if (s == "json") return output_format::json;
    return std::nullopt;
}

void append_json_escaped(std::string& out, std::string_view s) { iss::append_json_escaped(out, s); }

std::string format_rfc3339_micros(clock::system_time t) {
    using namespace std::chrono;
    const auto us = duration_cast<microseconds>(t.time_since_epoch()).count();
    auto secs = us / 1'000'000;
    auto frac = us % 1'000'000;
    if (frac < 0) {
        frac += 1'000'000;
        --secs;
    }
    std::string out;
    append_rfc3339(out, secs, static_cast<std::uint32_t>(frac), 6);
    return out;
}

std::string format_record(const record& r, output_format f) {
    std::string out;
    out.reserve(96 + r.message.size());
    const std::string ts = format_rfc3339_micros(r.time);
    if (f == output_format::json) {
        out += "{\"ts\":\"";
        out += ts;
        out += "\",\"level\":\"";
        out += to_string(r.lvl);
        out += "\",\"logger\":\"";
        append_json_escaped(out, r.logger);
        out += "\",\"msg\":\"";
        append_json_escaped(out, r.message);
        out += '"';
        for (const auto& fl : r.context) append_json_field(out, fl.key, fl.value);
        for (const auto& fl : r.fields) append_json_field(out, fl.key, fl.value);
        out += '}';
        return out;
    }
    out += ts;
    out += ' ';
    const auto lv = to_string(r.lvl);
    out += lv;
    out.append(6 - std::min<std::size_t>(lv.size(), 5), ' ');
    out += r.logger;
    out += ": ";
    // The message is free text; keep it on one line.
    for (char c : r.message) out += (c == '\n' || c == '\r') ? ' ' : c;
    for (const auto* list : {&r.context, &r.fields}) {
        for (const auto& fl : *list) {
            out += ' ';
            out += fl.key;
            out += '=';
            append_text_value(out, fl.value);
        }
    }
    return out;
}

int priority(level l) noexcept {
    switch (l) {
        case level::error: return 3;  // LOG_ERR
        case level::warn: return 4;   // LOG_WARNING
        case level::info: return 6;   // LOG_INFO
        case level::trace:
        case level::debug:
        case level::off: break;
    }
    return 7;  // LOG_DEBUG
}

bool journal_stream_matches(std::string_view v, std::uint64_t device, std::uint64_t inode) noexcept {
    const auto colon = v.find(':');
    if (colon == std::string_view::npos) return false;
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    const auto d = std::from_chars(v.data(), v.data() + colon, dev);
    const auto i = std::from_chars(v.data() + colon + 1, v.data() + v.size(), ino);
    return d.ec == std::errc{} && d.ptr == v.data() + colon && colon > 0 && i.ec == std::errc{} &&
           i.ptr == v.data() + v.size() && colon + 1 < v.size() && dev == device && ino == inode;
}

bool stderr_is_journal() noexcept {
    const char* v = std::getenv("JOURNAL_STREAM");
    struct stat st = {};
    if (v == nullptr || ::fstat(STDERR_FILENO, &st) != 0) return false;
    return journal_stream_matches(v, static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino));
}

void use_priority_prefixes(bool on) { g_prefix.store(on); }

std::string_view stderr_prefix(level l) noexcept {
    if (!g_prefix.load(std::memory_order_relaxed)) return {};
    static constexpr std::string_view prefixes[] = {"<0>", "<1>", "<2>", "<3>", "<4>", "<5>", "<6>", "<7>"};
    return prefixes[priority(l)];
}

void print_stderr(level l, std::string_view text) {
    std::fflush(stdout);
    const std::string_view prefix = stderr_prefix(l);
    std::string out;
    out.reserve(text.size() + 16);
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        out += prefix;
        out += line;
        out += '\n';
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    }
    std::fwrite(out.data(), 1, out.size(), stderr);
    std::fflush(stderr);
}

void configure(level min, output_format f) {
    g_level.store(min);
    g_format.store(f);
}

level min_level() noexcept { return g_level.load(std::memory_order_relaxed); }

void set_sink(std::function<void(std::string_view)> sink) {
    std::lock_guard lk{g_sink_mu};
    g_sink = std::move(sink);
}

void set_clock(const iss::clock* c) { g_clock.store(c); }

logger::logger(std::string name, fields context) : name_{std::move(name)}, context_{std::move(context)} {}

logger logger::with(fields extra) const {
    fields all = context_;
    all.insert(all.end(), std::make_move_iterator(extra.begin()), std::make_move_iterator(extra.end()));
    return logger{name_, std::move(all)};
}

void logger::write(level l, std::string_view message, std::span<const field> extra) const {
    if (!enabled(l)) return;
    const iss::clock* c = g_clock.load();
    const record r{
        c != nullptr ? c->system_now() : std::chrono::system_clock::now(), l, name_, message, context_, extra};
    std::string line{stderr_prefix(l)};
    line += format_record(r, g_format.load());
    std::lock_guard lk{g_sink_mu};
    if (g_sink) {
        g_sink(line);
        return;
    }
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
}

}  // namespace iss::log
