#include "pipeline/rotation.hpp"

#include "pipeline/error.hpp"

#include <date/tz.h>

#include <algorithm>
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

std::optional<clock::system_time> schedule_aligner::next_boundary(clock::system_time t) const {
    using namespace std::chrono;
    if (period_.count() == 0) return std::nullopt;
    const auto ts = time_point_cast<seconds>(t);
    const date::local_seconds local = tz_->to_local(ts);
    // Boundaries are multiples of the period since the local epoch (local midnight
    // 1970-01-01), so 1h = every full local hour, 1d = every local midnight.
    auto since = local.time_since_epoch();
    auto k = since.count() >= 0 ? since / period_ : (since - period_ + seconds{1}) / period_;
    for (auto n = k + 1;; ++n) {
        const date::local_seconds candidate{period_ * n};
        // A local time in a DST gap maps to the transition; an ambiguous one to its first
        // occurrence. Either way take the first boundary that is strictly after t.
        const auto sys = tz_->to_sys(candidate, date::choose::earliest);
        if (clock::system_time{sys} > t) return clock::system_time{sys};
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

std::optional<rotate_reason> rotation_policy::due(
  const open_object_state& s, clock::steady_time steady_now, clock::system_time system_now) const noexcept {
    if (s.records == 0) return std::nullopt;
    if (s.schedule_deadline && system_now >= *s.schedule_deadline) return rotate_reason::schedule;
    if (o_.idle.count() > 0 && steady_now - s.last_append >= o_.idle) return rotate_reason::idle;
    return std::nullopt;
}

std::optional<std::chrono::nanoseconds> rotation_policy::time_to_due(
  const open_object_state& s, clock::steady_time steady_now, clock::system_time system_now) const noexcept {
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
