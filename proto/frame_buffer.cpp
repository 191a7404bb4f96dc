// SPDX-License-Identifier: Apache-2.0
#include "proto/frame_buffer.hpp"

#include <cstring>
#include <utility>

namespace iss::proto {

void frame_buffer::compact() {
    begin_ += release_;
    release_ = 0;
    if (begin_ == 0) return;
    if (begin_ == end_) {
        begin_ = end_ = 0;
        return;
    }
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
}

void frame_buffer::feed(bytes_view data) {
    auto space = prepare(data.size());
    if (!data.empty()) std::memcpy(space.data(), data.data(), data.size());
    commit(data.size());
}

byte_buffer frame_buffer::exchange_storage(byte_buffer fresh) {
    const std::size_t rest_at = begin_ + release_;
    const std::size_t rest = end_ - rest_at;
    if (fresh.size() < rest) fresh.resize(rest);
    if (rest > 0) std::memcpy(fresh.data(), buf_.data() + rest_at, rest);
    byte_buffer old = std::exchange(buf_, std::move(fresh));
    begin_ = release_ = 0;
    end_ = rest;
    return old;
}

std::span<std::byte> frame_buffer::prepare(std::size_t n) {
    compact();
    if (buf_.size() < end_ + n) buf_.resize(end_ + n);
    return {buf_.data() + end_, n};
}

}  // namespace iss::proto
