// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The daemon-wide memory and spool budget (`memory.max_buffered`, `memory.max_spool`).
///
/// Everything the pipeline holds for data not yet durable is charged here: each open or
/// in-flight object's buffer (its capacity: what the allocator really holds), the encoder's
/// pending bytes (a Parquet row group, compressor state), and each poll batch from the poll
/// request until the batch has been fed. Spool files are charged separately against
/// `max_spool` (a multipart upload maps its parts back from the spool: page cache, no buffer).
///
/// What the budget drives (lib/pipeline/consumer.cpp, lib/pipeline/router.cpp):
/// - a poll asks for at most as many messages as fit twice in what is free (the batch and its
///   copy into the objects; the average message size seen so far times the count), and is
///   charged its estimate while in flight, then its real size until it has been fed;
/// - at 90% of `max_buffered` (`soft_limit_reached`) the partitions holding more than their
///   fair share (90% of the budget divided among the objects that hold memory) are not
///   polled, so the others keep moving;
/// - at 100% (`hard_limit_reached`), or at 90% after a round in which nothing could be fed,
///   the largest open objects are closed and uploaded early (any cut is exactly-once: the
///   delivery contract in delivery.hpp does not depend on where an object ends) until use
///   is down to 75%, and after a round in which nothing could be fed (below 90% too) until
///   what a held-back writer lacked is free (partition_writer::budget_shortfall);
/// - a record whose append would grow its object past `max_buffered` is not appended: it and
///   the rest of its batch are polled again later from the writer's next offset (feed answers
///   `rewind`), unless its object holds no record yet and nothing but that batch holds
///   memory (a record larger than the budget still moves, and its object is not grown past
///   the budget again); object buffers grow by no more than what is free. An open object is
///   charged its buffer and what its encoder holds (record_encoder::memory: pending bytes, a
///   compressor's block and zstd context). A zstd context appears when the object's first
///   block is compressed (up to 90 MiB at level 19): use can pass the budget by the contexts
///   that appear in one step, and the next poll closes the largest objects;
/// - an object whose next part would not fit in `max_spool` is closed instead of spooled.
///
/// It also keeps up to two object buffers of about one part between objects
/// (`take_buffer` / `give_buffer`, common/buffer_pool.hpp), so that a new object does not
/// fault a fresh part in page by page: only while what is charged plus what is kept stays
/// below the soft limit, so kept buffers never hold room the objects need.
///
/// Single-threaded (the event loop), like the rest of the pipeline.

#include "common/buffer_pool.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace iss::pipeline {

struct memory_limits {
    /// Bytes in memory for open objects and poll batches; max() = no limit.
    std::uint64_t max_buffered = std::numeric_limits<std::uint64_t>::max();
    /// Bytes in spool files; max() = no limit.
    std::uint64_t max_spool = std::numeric_limits<std::uint64_t>::max();
};

class memory_budget {
public:
    explicit memory_budget(memory_limits l = {}) noexcept : limits_{l} {}
    memory_budget(const memory_budget&) = delete;
    memory_budget& operator=(const memory_budget&) = delete;

    /// One holder's share (an object, a poll batch): `set` replaces what it holds; the
    /// destructor gives it back. A default-constructed charge (no budget) counts nothing.
    class charge {
    public:
        charge() noexcept = default;
        explicit charge(memory_budget* b) noexcept : b_{b} {}
        charge(charge&& o) noexcept;
        charge& operator=(charge&& o) noexcept;
        charge(const charge&) = delete;
        charge& operator=(const charge&) = delete;
        ~charge() { set(0, 0); }
        /// Holds `memory` bytes in memory and `spool` bytes in a spool file from now on.
        void set(std::uint64_t memory, std::uint64_t spool) noexcept;
        [[nodiscard]] std::uint64_t memory() const noexcept { return memory_; }
        [[nodiscard]] std::uint64_t spool() const noexcept { return spool_; }

    private:
        memory_budget* b_ = nullptr;
        std::uint64_t memory_ = 0;
        std::uint64_t spool_ = 0;
    };

    [[nodiscard]] const memory_limits& limits() const noexcept { return limits_; }
    [[nodiscard]] bool limited() const noexcept {
        return limits_.max_buffered != std::numeric_limits<std::uint64_t>::max();
    }
    /// Bytes held in memory now / at most so far.
    [[nodiscard]] std::uint64_t buffered() const noexcept { return buffered_; }
    [[nodiscard]] std::uint64_t peak_buffered() const noexcept { return peak_buffered_; }
    /// Bytes in spool files now.
    [[nodiscard]] std::uint64_t spooled() const noexcept { return spooled_; }
    /// Charges holding memory (> 0 bytes) now.
    [[nodiscard]] std::uint64_t holders() const noexcept { return holders_; }
    /// Bytes of `max_buffered` not in use (0 when at or over it).
    [[nodiscard]] std::uint64_t free() const noexcept {
        return buffered_ >= limits_.max_buffered ? 0 : limits_.max_buffered - buffered_;
    }
    /// 90% of max_buffered: stop polling the biggest holders.
    [[nodiscard]] std::uint64_t soft_limit() const noexcept { return limits_.max_buffered / 10 * 9; }
    /// 75% of max_buffered: where closing objects early stops.
    [[nodiscard]] std::uint64_t relief_target() const noexcept { return limits_.max_buffered / 4 * 3; }
    [[nodiscard]] bool soft_limit_reached() const noexcept { return limited() && buffered_ >= soft_limit(); }
    [[nodiscard]] bool hard_limit_reached() const noexcept { return limited() && buffered_ >= limits_.max_buffered; }
    /// A holder of `bytes` holds more than its fair share of the soft limit.
    [[nodiscard]] bool above_fair_share(std::uint64_t bytes) const noexcept;
    /// May `more` bytes be added to the spool files?
    [[nodiscard]] bool spool_allows(std::uint64_t more) const noexcept { return spooled_ + more <= limits_.max_spool; }
    /// Records one fed message of `bytes` (payload, headers and per-message overhead) for
    /// the poll estimate.
    void saw_message(std::uint64_t bytes) noexcept;
    /// Average bytes per message seen so far (4 KiB before any).
    [[nodiscard]] std::uint64_t average_message_bytes() const noexcept;
    /// How many of `wanted` messages a poll may ask for now: as many as fit twice (the batch
    /// and its copy in the objects while it is fed) in what is free,
    /// at least 1 when nothing is held at all (a single message larger than the budget still
    /// moves), 0 when none fits.
    [[nodiscard]] std::uint32_t poll_allowance(std::uint32_t wanted) const noexcept;

    /// An empty string with capacity for `bytes` (a kept object buffer when one is large
    /// enough and, charged in place of a buffer of `replaces` bytes, stays within what is
    /// free; else a new allocation of exactly `bytes`). Charge it as its capacity.
    [[nodiscard]] std::string take_buffer(std::size_t bytes, std::size_t replaces = 0);
    /// An object buffer that is no longer needed: kept if it is large (at least 1 MiB) and
    /// the bounds above allow, else freed.
    void give_buffer(std::string b);
    /// Capacity of the object buffers kept now (not charged: no object holds them).
    [[nodiscard]] std::size_t kept_buffer_bytes() const { return kept_.kept_bytes(); }

    /// "256 MiB: up to 32 objects of 8 MiB in memory" for the start log; with `codec_state`
    /// (bytes each open object's encoder holds: encoder_factory::state_bytes) "up to 21
    /// objects of 8 MiB + 3.7 MiB of codec state".
    [[nodiscard]] std::string describe(std::uint64_t part_size, std::uint64_t codec_state = 0) const;

private:
    memory_limits limits_;
    std::uint64_t buffered_ = 0;
    std::uint64_t peak_buffered_ = 0;
    std::uint64_t spooled_ = 0;
    std::uint64_t holders_ = 0;
    std::uint64_t seen_messages_ = 0;
    std::uint64_t seen_bytes_ = 0;
    buffer_pool<std::string> kept_{2, std::numeric_limits<std::size_t>::max()};
};

}  // namespace iss::pipeline
