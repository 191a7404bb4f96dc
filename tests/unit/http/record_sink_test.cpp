// SPDX-License-Identifier: Apache-2.0
// Where the TLS record writer puts sealed records (lib/http/record_sink.hpp): straight onto
// the socket while it takes them, the rest in order for a write that waits for room.
#include "http/record_sink.hpp"

#include "catch2_compat.hpp"
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

using iss::http::detail::record_sink;

namespace {

/// A connected pair of stream sockets; [0] the sender, [1] the receiver. Small buffers, so
/// a few records fill them.
struct socket_pair {
    int fd[2] = {-1, -1};
    socket_pair() {
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0);
        const int small = 16 * 1024;
        ::setsockopt(fd[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
        ::setsockopt(fd[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    }
    ~socket_pair() {
        for (int f : fd)
            if (f >= 0) ::close(f);
    }
    /// Everything the receiver can read now (non-blocking).
    std::string drain(std::size_t at_most = SIZE_MAX) const {
        std::string out;
        char buf[4096];
        while (out.size() < at_most) {
            const ssize_t n = ::recv(fd[1], buf, std::min(sizeof buf, at_most - out.size()), MSG_DONTWAIT);
            if (n <= 0) break;
            out.append(buf, static_cast<std::size_t>(n));
        }
        return out;
    }
};

std::string record(char c, std::size_t n) { return std::string(n, c); }

}  // namespace

TEST_CASE("record sink: records go straight to the socket while it takes them", "[http][tls]") {
    socket_pair p;
    record_sink s{p.fd[0], {}, 0};
    REQUIRE(s.write(record('a', 1000)));
    REQUIRE(s.write(record('b', 10)));
    CHECK(s.pending.empty());
    CHECK(p.drain() == record('a', 1000) + record('b', 10));
}

TEST_CASE("record sink: what the socket refuses waits, and every later record behind it, in order", "[http][tls]") {
    socket_pair p;
    record_sink s{p.fd[0], {}, 0};
    std::string all;
    // Fill the socket until it refuses part of a record.
    char c = 'a';
    while (s.pending.empty()) {
        const std::string r = record(c, 5000);
        REQUIRE(s.write(r));
        all += r;
        c = c == 'z' ? 'a' : static_cast<char>(c + 1);
    }
    // The receiver makes room: the socket would take the next record now, but it must not
    // overtake what waits.
    std::string got = p.drain(8192);
    REQUIRE(got.size() > 0);
    REQUIRE(s.write(record('!', 300)));
    all += record('!', 300);
    CHECK(s.pending.size() >= 300);
    CHECK(s.pending.substr(s.pending.size() - 300) == record('!', 300));
    // What the caller's write then sends completes the stream, in order.
    std::size_t off = 0;
    while (off < s.pending.size()) {
        const ssize_t n = ::send(p.fd[0], s.pending.data() + off, s.pending.size() - off, MSG_DONTWAIT);
        if (n > 0) off += static_cast<std::size_t>(n);
        got += p.drain();
    }
    got += p.drain();
    CHECK(got.size() == all.size());
    CHECK(got == all);
}

TEST_CASE("record sink: a socket that fails reports its error; nothing is kept as if sent", "[http][tls]") {
    socket_pair p;
    ::close(p.fd[1]);
    p.fd[1] = -1;
    record_sink s{p.fd[0], {}, 0};
    CHECK_FALSE(s.write(record('x', 100)));
    CHECK(s.send_errno == EPIPE);
}
