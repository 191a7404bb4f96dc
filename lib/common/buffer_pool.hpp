// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// A small free list of large buffers (`std::string`, `std::vector<std::byte>`: anything with
/// `capacity()`), so that the buffers the daemon fills again and again (poll replies, object
/// buffers of about one part) are allocated once and not mapped, faulted in page by page,
/// zero-filled and unmapped for every batch or object. Blocks above glibc's mmap threshold
/// (fixed at 128 KiB, daemon/main.cpp) are returned to the kernel when freed, which keeps the
/// RSS honest but makes each new one cost a page fault per 4 KiB: in a profile of the
/// end-to-end benchmark that was the biggest kernel cost after the socket copies.
///
/// Bounded: at most `max_buffers` buffers and `max_bytes` of capacity are kept; a buffer
/// given back beyond either is freed. Thread-safe (a mutex; buffers may be let go on a
/// worker thread).

#include <cstddef>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace iss {

template <class Buffer>
class buffer_pool {
public:
    buffer_pool(std::size_t max_buffers, std::size_t max_bytes) noexcept
        : max_buffers_{max_buffers}, max_bytes_{max_bytes} {}
    buffer_pool(const buffer_pool&) = delete;
    buffer_pool& operator=(const buffer_pool&) = delete;

    /// The smallest kept buffer whose capacity is at least `bytes`; else the largest one (the
    /// caller grows it: a reallocation, as a fresh buffer would be); nullopt when none is
    /// kept. Its content and size are as they were given back (a vector's size is kept so
    /// that `resize` up to it writes no zeros; clear a string before appending to it).
    std::optional<Buffer> take(std::size_t bytes) {
        const std::lock_guard lock{mu_};
        if (free_.empty()) return std::nullopt;
        std::size_t pick = 0;
        for (std::size_t i = 1; i < free_.size(); ++i) {
            const std::size_t c = free_[i].capacity();
            const std::size_t best = free_[pick].capacity();
            if ((c >= bytes && (best < bytes || c < best)) || (best < bytes && c > best)) pick = i;
        }
        Buffer b = std::move(free_[pick]);
        free_[pick] = std::move(free_.back());
        free_.pop_back();
        kept_bytes_ -= b.capacity();
        return b;
    }

    /// Keeps `b` for a later `take` if the bounds allow, else frees it.
    void give(Buffer b) {
        const std::size_t c = b.capacity();
        if (c == 0) return;
        const std::lock_guard lock{mu_};
        if (free_.size() >= max_buffers_ || kept_bytes_ + c > max_bytes_) return;  // freed
        kept_bytes_ += c;
        free_.push_back(std::move(b));
    }

    /// Capacity of the buffers kept now.
    [[nodiscard]] std::size_t kept_bytes() const {
        const std::lock_guard lock{mu_};
        return kept_bytes_;
    }
    /// Gives every kept buffer back to the allocator.
    void release() {
        std::vector<Buffer> gone;
        const std::lock_guard lock{mu_};
        gone.swap(free_);
        kept_bytes_ = 0;
    }

private:
    const std::size_t max_buffers_;
    const std::size_t max_bytes_;
    mutable std::mutex mu_;
    std::vector<Buffer> free_;
    std::size_t kept_bytes_ = 0;
};

}  // namespace iss
