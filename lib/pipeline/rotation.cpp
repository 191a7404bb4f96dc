// SPDX-License-Identifier: Apache-2.0
#include "pipeline/rotation.hpp"

#include "pipeline/error.hpp"

#include <date/tz.h>

#include <algorithm>
#include <cstdint>
#include <exception>

namespace iss::pipeline {

std::string_view to_string(rotate_reason r) noexcept {
    switch (r) {
        case rotate_reason::max_records: return "max_records";
        case rotate_reason::max_bytes: return "max_bytes";
        case rotate_reason::part_size: return "part_size";
        case rotate_reason::max_span: return "max_span";
        case rotate_reason::schedule: return "schedule";
        case rotate_reason::idle: return "idle";
        case rotate_reason::hand_over: return "hand_over";
        case rotate_reason::stop: return "stop";
        case rotate_reason::bad_message: return "bad_message";
        case rotate_reason::max_open_objects: return "max_open_objects";
        case rotate_reason::time_bucket: return "time_bucket";
        case rotate_reason::commit_stall: return "commit_stall";
        case rotate_reason::memory_limit: return "memory_limit";
        case rotate_reason::spool_limit: return "spool_limit";
        case rotate_reason::spool_error: return "spool_error";
    }
    return "?";
}

result<schedule_aligner> schedule_aligner::make(std::chrono::seconds period, std::string_view tz) {
    if (period.count() < 0) return error{errc::invalid_option, "rotation.schedule: must be >= 0"};
    try {
        const date::time_zone* z = date::locate_zone(tz);
        return schedule_aligner{period, z};
    } catch (const std::exception& e) {
        return error{errc::invalid_option, fmt::format("rotation.timezone: unknown time zone {:?} ({})", tz, e.what())};
    }
}

namespace {

using std::chrono::seconds;

constexpr seconds one_day{86'400};

/// Floor and ceiling of a / b for b > 0 (local times before the epoch are negative).
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return -floor_div(-a, b); }

/// Is there a multiple of `p` in the local-label range [lo, hi) (seconds since the local epoch)?
bool multiple_in(std::int64_t lo, std::int64_t hi, std::int64_t p) { return lo < hi && ceil_div(lo, p) * p < hi; }

}  // namespace

// Boundaries are instants, found offset period by offset period (a `sys_info` is an interval
// of UTC with one UTC offset), never by converting local labels back to UTC: a label in the
// repeated hour of a fall-back has two instants, and a walk over labels loses one of them.
//   - In an interval with offset o, the boundaries are the instants b with (b + o) a multiple
//     of the period: every pass of a repeated hour has its own.
//   - Where the clock jumps forward at instant e (offset o1 -> o2 > o1), the labels
//     [e + o1, e + o2) never show; if a multiple of the period is among them, e is a boundary.
//   - Periods of a day or more: a label shown twice (the repeated hour at midnight) is a
//     boundary at its first pass only, so `1d` rotates once per local day.
std::optional<clock::system_time> schedule_aligner::next_boundary(clock::system_time t) const {
    using namespace std::chrono;
    if (period_.count() == 0) return std::nullopt;
    const std::int64_t p = period_.count();
    // Boundaries are whole seconds: the first one strictly after t is the first at or after `from`.
    auto from = floor<seconds>(t) + seconds{1};
    for (;;) {
        const date::sys_info info = tz_->get_info(from);
        const std::int64_t o = info.offset.count();
        if (from == info.begin) {
            const date::sys_info before = tz_->get_info(info.begin - seconds{1});
            const std::int64_t b = info.begin.time_since_epoch().count();
            if (before.offset < info.offset && multiple_in(b + before.offset.count(), b + o, p))
                return clock::system_time{info.begin};
        }
        const std::int64_t label = ceil_div(from.time_since_epoch().count() + o, p) * p;
        const date::sys_seconds candidate{seconds{label - o}};
        if (candidate < info.end) {
            if (period_ >= one_day) {
                // Shown before, in the previous interval (whose offset was larger by the overlap)?
                const date::sys_info before = tz_->get_info(info.begin - seconds{1});
                if (before.offset > info.offset && candidate < info.begin + (before.offset - info.offset)) {
                    from = candidate + seconds{1};
                    continue;
                }
            }
            return clock::system_time{candidate};
        }
        from = info.end;
    }
}

result<rotation_policy> rotation_policy::make(rotation_options o) {
    auto a = schedule_aligner::make(o.schedule, o.timezone);
    if (!a) return a.error();
    return rotation_policy{std::move(o), *a};
}

bool rotation_policy::span_exceeded(const open_object_state& s, std::uint64_t next_ts) const noexcept {
    if (o_.max_span.count() <= 0 || s.records == 0) return false;
    if (next_ts < s.first_timestamp_us) return false;  // clocks can step back; never rotate on that
    return next_ts - s.first_timestamp_us >= static_cast<std::uint64_t>(o_.max_span.count());
}

std::optional<rotate_reason> rotation_policy::full(const open_object_state& s, std::uint64_t cap) const noexcept {
    if (o_.max_records != 0 && s.records >= o_.max_records) return rotate_reason::max_records;
    if (o_.max_bytes != 0 && s.bytes >= o_.max_bytes) return rotate_reason::max_bytes;
    if (cap != 0 && s.bytes >= cap) return rotate_reason::part_size;
    return std::nullopt;
}

std::optional<rotate_reason> rotation_policy::due(const open_object_state& s, clock::steady_time steady_now,
                                                  clock::system_time system_now) const noexcept {
    if (s.records == 0) return std::nullopt;
    if (s.schedule_deadline && system_now >= *s.schedule_deadline) return rotate_reason::schedule;
    if (o_.idle.count() > 0 && steady_now - s.last_append >= o_.idle) return rotate_reason::idle;
    return std::nullopt;
}

std::optional<std::chrono::nanoseconds> rotation_policy::time_to_due(const open_object_state& s,
                                                                     clock::steady_time steady_now,
                                                                     clock::system_time system_now) const noexcept {
    using std::chrono::nanoseconds;
    if (s.records == 0) return std::nullopt;
    std::optional<nanoseconds> best;
    auto take = [&](nanoseconds d) {
        d = std::max(d, nanoseconds{0});
        if (!best || d < *best) best = d;
    };
    if (s.schedule_deadline) take(*s.schedule_deadline - system_now);
    if (o_.idle.count() > 0) take(s.last_append + o_.idle - steady_now);
    return best;
}

}  // namespace iss::pipeline
