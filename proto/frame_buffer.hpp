// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The receive buffer behind both frame assemblers (`proto::frame_assembler` for G1,
/// `proto::g2::frame_assembler` for G2): bytes go in (copied with `feed`, or read in place with
/// `prepare` + `commit`), whole frames come out as views. The assemblers only parse headers.
///
/// A frame handed out by `take` stays where it is until the next `feed`, `prepare`, `advance`
/// or `take`: the bytes it covers are released (and the rest moved to the front) then.
/// Once `fail` was called the buffer stays failed until `reset` (the byte stream is out of step).

#include "proto/wire.hpp"

#include <cstddef>
#include <optional>
#include <span>

namespace iss::proto {

class frame_buffer {
public:
    /// Copies received bytes in.
    void feed(bytes_view data);
    /// Space for up to `n` bytes to read into directly; follow with `commit`.
    std::span<std::byte> prepare(std::size_t n);
    /// Marks `n` bytes of the last `prepare` as received.
    void commit(std::size_t n) noexcept { end_ += n; }

    /// Bytes received and not consumed (the frame handed out last counts until the next call).
    [[nodiscard]] std::size_t buffered() const noexcept { return end_ - begin_; }
    /// The bytes after the frame handed out last (for `bytes_wanted`).
    [[nodiscard]] bytes_view pending() const noexcept {
        return {buf_.data() + begin_ + release_, end_ - begin_ - release_};
    }
    /// Releases the frame handed out last and returns the bytes not consumed yet.
    bytes_view advance() noexcept {
        begin_ += release_;
        release_ = 0;
        return {buf_.data() + begin_, end_ - begin_};
    }
    /// Hands out the first `n` bytes of what `advance` returned (`n` <= that size).
    bytes_view take(std::size_t n) noexcept {
        release_ = n;
        return {buf_.data() + begin_, n};
    }

    /// Hands the storage over: returns the buffer that holds the frame handed out last (its
    /// views stay valid for as long as the returned buffer lives, wherever it goes) and goes
    /// on in `fresh`, into which the bytes received after that frame, if any, are copied.
    /// `fresh` keeps its size, so reading into it up to that size writes no zeros first.
    byte_buffer exchange_storage(byte_buffer fresh);

    /// The error that stopped this buffer, if any.
    [[nodiscard]] const std::optional<iss::error>& failure() const noexcept { return failed_; }
    /// Stops the buffer with `e` and returns it.
    iss::error fail(iss::error e) {
        failed_ = std::move(e);
        return *failed_;
    }
    /// Forgets every byte and the failure (a new connection). The memory is kept, so views
    /// handed out before stay readable until the next `feed` or `prepare`.
    void reset() noexcept {
        begin_ = end_ = release_ = 0;
        failed_.reset();
    }

private:
    void compact();

    byte_buffer buf_;
    std::size_t begin_ = 0;    // first unconsumed byte
    std::size_t end_ = 0;      // one past the last received byte
    std::size_t release_ = 0;  // bytes of the frame handed out last, released on the next call
    std::optional<iss::error> failed_;
};

/// What both frame assemblers offer of their `frame_buffer`: bytes in, storage handed over, the
/// count held. Each assembler adds its own header parsing on `buf_`.
class frame_input {
public:
    /// Copies received bytes in.
    void feed(bytes_view data) { buf_.feed(data); }
    /// Space for up to `n` bytes to read into directly; follow with `commit`.
    std::span<std::byte> prepare(std::size_t n) { return buf_.prepare(n); }
    /// Marks `n` bytes of the last `prepare` as received.
    void commit(std::size_t n) noexcept { buf_.commit(n); }
    /// Forgets every byte and a failure (a new connection); views handed out before stay
    /// readable until the next `feed` or `prepare`.
    void reset() noexcept { buf_.reset(); }
    /// Hands the buffer holding the frame returned last over and goes on in `fresh`
    /// (`frame_buffer::exchange_storage`).
    byte_buffer exchange_storage(byte_buffer fresh) { return buf_.exchange_storage(std::move(fresh)); }
    /// Bytes received and not yet returned as frames.
    [[nodiscard]] std::size_t buffered() const noexcept { return buf_.buffered(); }

protected:
    frame_buffer buf_;
};

}  // namespace iss::proto
