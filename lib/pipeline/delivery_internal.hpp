// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The partition writer's open object and the helpers its three source files share
/// (lib/pipeline/delivery.cpp, delivery_upload.cpp, delivery_commit.cpp). Internal to
/// lib/pipeline.

#include "pipeline/delivery.hpp"
#include "pipeline/spool.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace iss::pipeline {

/// One open (or in-flight) object of a partition writer: its key, encoder, bytes (in memory
/// and spilled), memory charge and the range of offsets it accounts for (its encoded
/// partition, bucket and first offset are the open-object set's entry).
struct partition_writer::open_object : open_object_entry {
    open_object(std::string spool_dir, memory_budget* budget)
        : spilled{std::move(spool_dir),
                  budget ? std::min(spool::max_spare_bytes, budget->limits().max_spool / 16) : spool::max_spare_bytes},
          held{budget},
          budget_{budget} {}
    open_object(const open_object&) = delete;
    open_object& operator=(const open_object&) = delete;
    /// Gives `buf` back to the budget's kept buffers (memory.hpp).
    ~open_object() override {
        if (budget_) budget_->give_buffer(std::move(buf));
    }
    object_key key;
    std::unique_ptr<record_encoder> encoder;
    std::string buf;             ///< encoder output not yet spilled (at most about one part)
    spool spilled;               ///< encoder output beyond one part, in whole parts (multipart objects)
    spool::mapping part;         ///< the part of `spilled` being uploaded, mapped (declared after
                                 ///< `spilled`: unmapped before its file goes back to the spares)
    memory_budget::charge held;  ///< what `buf`, the encoder and `spilled` hold, charged
    /// Part digests as the bytes were produced (writer_ports::part_hashers; no hasher: none):
    /// those of each whole part so far, how far the object's bytes (spilled + buf) are summed,
    /// and, once asked for at the upload, those of the last partial part.
    std::unique_ptr<part_hasher> hasher;
    std::vector<body_digests> part_sums;
    std::uint64_t sum_through = 0;
    std::optional<body_digests> tail;
    std::uint64_t last_offset = 0;  ///< last offset accounted for (records, skipped, dead-lettered)
    std::uint64_t records = 0;
    std::uint64_t payload_bytes = 0;  ///< payload bytes of the records appended
    std::uint64_t first_timestamp_us = 0;
    clock::steady_time last_append{};
    std::optional<clock::system_time> schedule_deadline;

private:
    memory_budget* budget_;
};

inline partition_writer::open_object& partition_writer::as_object(open_object_entry& e) noexcept {
    return static_cast<open_object&>(e);
}
inline const partition_writer::open_object& partition_writer::as_object(const open_object_entry& e) noexcept {
    return static_cast<const open_object&>(e);
}

namespace detail {
/// Seconds from `t` to now on `c`'s steady clock (for the timing histograms).
inline double seconds_since(const iss::clock& c, clock::steady_time t) {
    return std::chrono::duration<double>(c.steady_now() - t).count();
}
}  // namespace detail

}  // namespace iss::pipeline
