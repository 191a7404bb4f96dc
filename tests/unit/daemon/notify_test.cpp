// SPDX-License-Identifier: Apache-2.0
#include "daemon/notify.hpp"

#include "catch2_compat.hpp"
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <map>

namespace {

/// A datagram socket bound at `name` (a path, or `@abstract`), as systemd's NOTIFY_SOCKET.
struct listener {
    explicit listener(std::string n) : name{std::move(n)} {
        fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path, name.data(), name.size());
        if (a.sun_path[0] == '@') a.sun_path[0] = '\0';
        const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
        REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&a), len) == 0);
        timeval tv{2, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    ~listener() {
        ::close(fd);
        if (name.front() == '/') ::unlink(name.c_str());
    }
    std::string receive() const {
        char buf[4096];
        const auto n = ::recv(fd, buf, sizeof buf, 0);
        return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string{};
    }
    std::string name;
    int fd = -1;
};

}  // namespace

TEST_CASE("notify: the datagram protocol reaches a path socket and an abstract one", "[daemon][notify]") {
    const std::string path = "/tmp/iss-notify-test-" + std::to_string(::getpid());
    listener l{path};
    REQUIRE(iss::app::send_notify_datagram(path, "READY=1\nSTATUS=running").has_value());
    CHECK(l.receive() == "READY=1\nSTATUS=running");

    const std::string abstract = "@iss-notify-test-" + std::to_string(::getpid());
    listener la{abstract};
    REQUIRE(iss::app::send_notify_datagram(abstract, "WATCHDOG=1").has_value());
    CHECK(la.receive() == "WATCHDOG=1");

    auto bad = iss::app::send_notify_datagram("relative/path", "READY=1");
    REQUIRE_FALSE(bad.has_value());
    CHECK_THAT(bad.error().message(), Catch::Matchers::ContainsSubstring("NOTIFY_SOCKET"));
    auto gone = iss::app::send_notify_datagram("/tmp/iss-notify-none-" + std::to_string(::getpid()), "READY=1");
    CHECK_FALSE(gone.has_value());
}

TEST_CASE("notify: WATCHDOG_USEC applies when WATCHDOG_PID is unset or ours", "[daemon][notify]") {
    std::map<std::string, std::string, std::less<>> env;
    auto lookup = [&](std::string_view n) -> std::optional<std::string> {
        auto it = env.find(n);
        if (it == env.end()) return std::nullopt;
        return it->second;
    };
    CHECK_FALSE(iss::app::watchdog_from_env(lookup, 42));
    env["WATCHDOG_USEC"] = "400000";
    CHECK(iss::app::watchdog_from_env(lookup, 42) == std::chrono::microseconds{400000});
    env["WATCHDOG_PID"] = "42";
    CHECK(iss::app::watchdog_from_env(lookup, 42) == std::chrono::microseconds{400000});
    env["WATCHDOG_PID"] = "43";
    CHECK_FALSE(iss::app::watchdog_from_env(lookup, 42));
    env.erase("WATCHDOG_PID");
    env["WATCHDOG_USEC"] = "soon";
    CHECK_FALSE(iss::app::watchdog_from_env(lookup, 42));
}
