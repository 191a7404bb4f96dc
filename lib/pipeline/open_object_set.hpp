// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The open and in-flight objects of one partition, one open object per encoded partition,
/// and the pure decisions of the encoded-partition rules (the essay of delivery.hpp) over
/// them: which objects a message of a later time bucket closes (G5), which one makes room
/// above `max_open_objects` (G4), the order in which closed objects are delivered (first
/// offset), the lowest first offset the commit point stays below (G3), and the largest one
/// when memory is short. No I/O, no coroutines: `partition_writer` keeps its objects here
/// (its `open_object` derives from `open_object_entry`) and acts on the answers; the unit
/// tests feed it plain entries (tests/unit/pipeline/open_object_set_test.cpp). Not
/// thread-safe (the event loop's).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iss::pipeline {

/// What the set decides by: an object's encoded partition, its first message's time bucket
/// (when the key has time fields) and its first offset.
struct open_object_entry {
    virtual ~open_object_entry() = default;
    std::string encoded;                 ///< the encoded partition (key without {start_offset})
    std::optional<std::int64_t> bucket;  ///< time bucket of the first message, when the key has one
    std::uint64_t first_offset = 0;
};

class open_object_set {
public:
    using entry_ptr = std::unique_ptr<open_object_entry>;

    /// The open object of encoded partition `id`, or nullptr.
    [[nodiscard]] open_object_entry* find(std::string_view id) const;
    /// Opens `o` for its encoded partition. \pre none is open for it.
    open_object_entry& open(entry_ptr o);
    /// Forgets the open object of `id` without delivering it (it holds no record).
    void discard(std::string_view id);

    /// G5: the open objects whose time bucket is earlier than `bucket`.
    [[nodiscard]] std::vector<std::string> earlier_buckets(std::int64_t bucket) const;
    /// G4: before a new encoded partition opens its object, the one to close so that at most
    /// `max_open` (at least 1) are open: the one with the oldest first message; nullopt: room.
    [[nodiscard]] std::optional<std::string> make_room(std::uint32_t max_open) const;
    /// The open object with the greatest `weight` (the memory it holds); nullopt: none open.
    [[nodiscard]] std::optional<std::string> largest(
        const std::function<std::uint64_t(const open_object_entry&)>& weight) const;
    /// Every encoded partition with an open object.
    [[nodiscard]] std::vector<std::string> ids() const;
    /// G3: the lowest first offset among the open and in-flight objects (nullopt: none).
    [[nodiscard]] std::optional<std::uint64_t> lowest_first() const;

    /// Closes the open objects of `ids` (those open): they join the in-flight ones, which are
    /// delivered in first-offset order and hold the commit point back until each is durable.
    void close(const std::vector<std::string>& ids);
    /// The in-flight object to deliver next. \pre in_flight().
    [[nodiscard]] open_object_entry& front() const { return *closing_.front(); }
    /// The front object is durable: it leaves the set.
    void pop_front();
    [[nodiscard]] bool in_flight() const noexcept { return !closing_.empty(); }

    /// Forgets every open and in-flight object (dropped unwritten).
    void clear() noexcept;
    [[nodiscard]] bool empty() const noexcept { return open_.empty(); }
    [[nodiscard]] bool holds() const noexcept { return !open_.empty() || !closing_.empty(); }
    [[nodiscard]] std::size_t open_count() const noexcept { return open_.size(); }
    [[nodiscard]] std::size_t count() const noexcept { return open_.size() + closing_.size(); }
    /// Visits every open, then every in-flight object.
    void for_each(const std::function<void(open_object_entry&)>& f) const;
    /// Visits every open object.
    void for_each_open(const std::function<void(open_object_entry&)>& f) const;

private:
    std::map<std::string, entry_ptr, std::less<>> open_;  ///< by encoded partition
    std::vector<entry_ptr> closing_;                      ///< closed, not yet durable (in flight)
};

}  // namespace iss::pipeline
