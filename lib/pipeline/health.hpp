// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Faults of the daemon's surroundings that the partition writers meet and outlive without a
/// restart (docs/operations.md, Faults): the store refusing writes (permissions revoked, the
/// bucket's KMS key disabled) and the spool directory failing (full, read-only, deleted).
///
/// The naive handling of both is the problem: a refused PutObject is "fatal" to the S3 client,
/// and in a consumer group the writer drops the object and re-reads it at once, so a store
/// that refuses everything is asked again as fast as the partition can be re-read (a retry
/// storm); a spool write that fails was a warn line per object and nothing else. Here each
/// writer reports what it met, and the daemon's readiness (/readyz) and metrics read one
/// shared answer:
/// - `store_refused` (an upload or HEAD answered with a refusal: AccessDenied,
///   KMS.DisabledException ...) marks the store refusing, counted per S3 error code; the next
///   upload that succeeds (`store_accepted`) clears it. The writers retry at a backoff up to
///   `s3.retry.cap` (single consumer: in place; group: the partition is not polled again
///   before its backoff passed, partition_writer::retry_at);
/// - `spool_failed` (a spool write or file creation failed, or the directory check found it
///   unusable) marks the spool failing, counted per reason; `spool_ok` (a later check or
///   write found it usable) clears it. Meanwhile objects are closed at what they hold instead
///   of spooling (rotate_reason::spool_error), so memory stays about one part per object.
///
/// Shared by every writer of a router (writer_ports::health); event-loop thread only.

#include "common/clock.hpp"
#include "common/error.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace iss::pipeline {

/// Why the spool directory cannot be used (`iggy_s3_sink_spool_errors_total{reason}`).
enum class spool_error_reason : std::uint8_t {
    no_space,   ///< ENOSPC / EDQUOT, or less room than one part left
    read_only,  ///< EROFS (or EACCES: not writable by this process)
    missing,    ///< ENOENT / ENOTDIR: the directory is gone
    io_error,   ///< anything else (EIO ...)
};
inline constexpr std::array<spool_error_reason, 4> spool_error_reasons{
    spool_error_reason::no_space, spool_error_reason::read_only, spool_error_reason::missing,
    spool_error_reason::io_error};
/// "no_space", "read_only", "missing", "io_error".
[[nodiscard]] std::string_view to_string(spool_error_reason r) noexcept;
/// The reason of an errno value from a spool file or directory operation.
[[nodiscard]] spool_error_reason spool_error_reason_of(int errno_value) noexcept;
/// The reason of a spool error (`spool::append`, `spool::check_directory`: the system's code;
/// any other code is io_error).
[[nodiscard]] spool_error_reason spool_error_reason_of(const error& e) noexcept;

class delivery_health {
public:
    /// The store's current refusal: its error code (S3 `<Code>`), the detail of the last
    /// refused request (operation, key, status, message, request id, what to check) and since
    /// when it refuses.
    struct refusal {
        std::string code;
        std::string detail;
        clock::steady_time since{};
    };
    /// The spool directory's current fault.
    struct spool_fault {
        spool_error_reason reason = spool_error_reason::io_error;
        std::string detail;  ///< the failed operation and the system's message
        clock::steady_time since{};
    };

    /// An upload or HEAD was refused with `code`. Returns true when the store was not
    /// refusing before (or refused with another code): the caller logs the change once.
    bool store_refused(std::string_view code, std::string_view detail, clock::steady_time now);
    /// An upload succeeded. Returns true when this ends a refusal (the caller logs it).
    bool store_accepted() noexcept;
    [[nodiscard]] const std::optional<refusal>& store_refusal() const noexcept { return refusal_; }
    /// Refused requests so far, by code (`iggy_s3_sink_store_refusals_total{code}`).
    [[nodiscard]] const std::map<std::string, std::uint64_t>& store_refusals() const noexcept { return refusals_; }

    /// A spool operation failed (counted). Returns true when the spool was not failing for
    /// this reason before (the caller logs the change once).
    bool spool_failed(spool_error_reason r, std::string_view detail, clock::steady_time now);
    /// A spool write or check found the directory usable. Returns true when this ends a fault.
    bool spool_ok() noexcept;
    [[nodiscard]] const std::optional<spool_fault>& spool() const noexcept { return spool_; }
    /// Failed spool operations so far, by reason (`iggy_s3_sink_spool_errors_total{reason}`).
    [[nodiscard]] std::uint64_t spool_errors(spool_error_reason r) const noexcept {
        return spool_errors_[static_cast<std::size_t>(r)];
    }

private:
    std::optional<refusal> refusal_;
    std::map<std::string, std::uint64_t> refusals_;
    std::optional<spool_fault> spool_;
    std::array<std::uint64_t, spool_error_reasons.size()> spool_errors_{};
};

}  // namespace iss::pipeline
