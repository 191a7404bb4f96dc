// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Rotation: when an open object is closed and uploaded. Pure: every decision takes the
/// time from its caller (the injected clock, docs/architecture.md §8.7.4).
///
/// An object rotates when ANY trigger fires:
/// - `max_records`: it holds that many records (checked after each append);
/// - `max_bytes`: the object as uploaded (after compression) reached that size (after append);
/// - `max_span`: record time: the next message's timestamp is `max_span` or more after the
///   object's first message (checked BEFORE appending it, so an object spans < max_span);
/// - `schedule`: the wall clock crossed a boundary aligned in `timezone` after the object was
///   opened (see schedule_aligner: 1h means every full local hour, 1d every local midnight);
/// - `idle`: no message was appended for that long (a timer: quiet partitions flush without
///   new data).
/// Zero disables a trigger. Record-time and size triggers are deterministic for a given
/// input; the wall-clock ones are not, which is why keys never depend on them and replays
/// adopt what exists (delivery.hpp).

#include "common/clock.hpp"
#include "common/error.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace date {
class time_zone;
}

namespace iss::pipeline {

/// The `rotation:` options (config fills them; zero disables a trigger).
struct rotation_options {
    std::uint64_t max_records = 10'000;                            ///< records per object; 0 = off
    std::uint64_t max_bytes = 64ull << 20;                         ///< bytes of the object as uploaded; 0 = off
    std::chrono::microseconds max_span{std::chrono::minutes{10}};  ///< record-time span; 0 = off
    std::chrono::seconds schedule{std::chrono::hours{1}};          ///< wall-clock period; 0 = off
    std::string timezone = "UTC";                                  ///< IANA name the schedule aligns in
    std::chrono::milliseconds idle{std::chrono::minutes{1}};       ///< no new message for; 0 = off
};

/// Why an object was closed (logged with the upload).
enum class rotate_reason {
    max_records,
    max_bytes,
    part_size,  ///< the store ignores conditional Complete: objects stay single-part (delivery.hpp)
    max_span,
    schedule,
    idle,
    hand_over,         ///< group polls stopped returning the partition
    stop,              ///< clean shutdown
    bad_message,       ///< on_bad_message: fail; what precedes the bad message is delivered
    max_open_objects,  ///< rotation.max_open_objects: the object with the oldest first message makes room
    time_bucket,       ///< a message of a later time bucket arrived (record time = Iggy's append time)
    commit_stall,  ///< delivered objects kept overlapping the open ones: every object is closed so the stored offset can move
    memory_limit,  ///< memory.max_buffered was reached: the largest open objects are closed early
    spool_limit,   ///< memory.max_spool would be passed by spooling the next part
    spool_error,   ///< the spool directory failed (full, read-only, missing): closed instead of spooling
};
[[nodiscard]] std::string_view to_string(rotate_reason r) noexcept;

/// Wall-clock schedule boundaries aligned in a time zone (date::date-tz, system tzdata).
///
/// A boundary is an instant (UTC) whose local wall-clock label in `tz`, at the UTC offset in
/// force at that instant, is a multiple of the period counted from local midnight 1970-01-01
/// (for periods that divide a day: a multiple since the local midnight of that day). So:
/// - `15m`, `1h` (periods under a day): every 15 minutes / every hour of real time, on the
///   local labels :00/:15/:30/:45 or the full hour. In the hour repeated by a DST fall-back
///   both passes are boundaries (Europe/Berlin, 2026-10-25, 1h: 00:00Z = 02:00 CEST, 01:00Z =
///   02:00 CET, 02:00Z = 03:00 CET). A label skipped by a spring-forward is replaced by the
///   instant of the jump (where the jump is not itself a boundary already). With a 30-minute
///   DST shift (Australia/Lord_Howe), 1h objects therefore span 90 or 30 minutes on those days.
/// - `1d` (and whole days): local midnight, once per local day: a day of 23 or 25 hours gives
///   an object of 23 or 25 hours. A midnight shown twice (a fall-back at 01:00 to 00:00,
///   America/Havana) is a boundary at its first pass only; a midnight skipped by a
///   spring-forward (America/Santiago) is replaced by the instant of the jump.
/// Successive boundaries are strictly increasing instants.
class schedule_aligner {
public:
    /// Looks `tz` up in the time-zone database; errc::invalid_option naming it when unknown.
    static result<schedule_aligner> make(std::chrono::seconds period, std::string_view tz);
    /// The first boundary strictly after `t` (whole seconds, UTC); nullopt when the schedule is
    /// off (period 0).
    [[nodiscard]] std::optional<clock::system_time> next_boundary(clock::system_time t) const;

private:
    schedule_aligner(std::chrono::seconds period, const date::time_zone* tz) : period_{period}, tz_{tz} {}
    std::chrono::seconds period_;
    const date::time_zone* tz_;
};

/// What the rotation policy needs to know about an open object.
struct open_object_state {
    std::uint64_t records = 0;
    std::uint64_t bytes = 0;                              ///< as uploaded so far (encoder output)
    std::uint64_t first_timestamp_us = 0;                 ///< record time of the first message
    clock::steady_time last_append{};                     ///< when the last message was appended
    std::optional<clock::system_time> schedule_deadline;  ///< next boundary after opening
};

/// The rotation decisions for one partition writer.
class rotation_policy {
public:
    rotation_policy(rotation_options o, schedule_aligner a) : o_{std::move(o)}, aligner_{std::move(a)} {}
    /// Builds the aligner from `o.schedule`/`o.timezone`; errors as schedule_aligner::make.
    static result<rotation_policy> make(rotation_options o);

    [[nodiscard]] const rotation_options& options() const noexcept { return o_; }
    /// Schedule deadline for an object opened at `opened` (wall clock).
    [[nodiscard]] std::optional<clock::system_time> schedule_deadline(clock::system_time opened) const {
        return aligner_.next_boundary(opened);
    }
    /// max_span: must the object be closed BEFORE appending a message with this timestamp?
    [[nodiscard]] bool span_exceeded(const open_object_state& s, std::uint64_t next_timestamp_us) const noexcept;
    /// max_records / max_bytes after an append (`max_bytes_cap` further caps max_bytes,
    /// 0 = no cap: part_size where objects must stay single-part).
    [[nodiscard]] std::optional<rotate_reason> full(const open_object_state& s,
                                                    std::uint64_t max_bytes_cap) const noexcept;
    /// idle / schedule: is the object due at these times?
    [[nodiscard]] std::optional<rotate_reason> due(const open_object_state& s, clock::steady_time steady_now,
                                                   clock::system_time system_now) const noexcept;
    /// How long from now until `due` can first fire (nullopt: never, no timer needed).
    [[nodiscard]] std::optional<std::chrono::nanoseconds> time_to_due(const open_object_state& s,
                                                                      clock::steady_time steady_now,
                                                                      clock::system_time system_now) const noexcept;

private:
    rotation_options o_;
    schedule_aligner aligner_;
};

}  // namespace iss::pipeline
