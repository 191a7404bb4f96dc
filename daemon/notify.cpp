// SPDX-License-Identifier: Apache-2.0
#include "daemon/notify.hpp"

#include "common/log.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#ifdef ISS_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace iss::app {

result<void> send_notify_datagram(std::string_view socket_path, std::string_view state) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.empty() || socket_path.size() >= sizeof(addr.sun_path) ||
        (socket_path.front() != '/' && socket_path.front() != '@'))
        return error{iss::errc::invalid_argument,
                     fmt::format("NOTIFY_SOCKET {:?}: not an absolute path or @abstract name", socket_path)};
    std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
    if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_path.size());
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return error{iss::errc::io_error, fmt::format("NOTIFY_SOCKET: socket: {}", std::strerror(errno))};
    const auto n =
        ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&addr), len);
    const int saved = errno;
    ::close(fd);
    if (n < 0 || static_cast<std::size_t>(n) != state.size())
        return error{iss::errc::io_error, fmt::format("NOTIFY_SOCKET {}: sendto: {}", socket_path,
                                                      n < 0 ? std::strerror(saved) : "short write")};
    return {};
}

std::optional<std::chrono::microseconds> watchdog_from_env(
    const std::function<std::optional<std::string>(std::string_view)>& env, long pid) {
    const std::optional<std::string> usec = env("WATCHDOG_USEC");
    if (!usec || usec->empty()) return std::nullopt;
    if (const std::optional<std::string> wpid = env("WATCHDOG_PID"); wpid && !wpid->empty()) {
        long p = 0;
        auto [end, ec] = std::from_chars(wpid->data(), wpid->data() + wpid->size(), p);
        if (ec != std::errc{} || end != wpid->data() + wpid->size() || p != pid) return std::nullopt;
    }
    unsigned long long v = 0;
    auto [end, ec] = std::from_chars(usec->data(), usec->data() + usec->size(), v);
    if (ec != std::errc{} || end != usec->data() + usec->size() || v == 0) return std::nullopt;
    return std::chrono::microseconds{static_cast<std::chrono::microseconds::rep>(v)};
}

namespace {
std::optional<std::string> getenv_opt(std::string_view name) {
    const char* v = std::getenv(std::string{name}.c_str());
    if (!v) return std::nullopt;
    return std::string{v};
}
}  // namespace

notifier::notifier() {
    if (auto s = getenv_opt("NOTIFY_SOCKET")) socket_ = *s;
#ifdef ISS_HAVE_LIBSYSTEMD
    std::uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0)
        watchdog_ = std::chrono::microseconds{static_cast<std::chrono::microseconds::rep>(usec)};
#else
    watchdog_ = watchdog_from_env(getenv_opt, static_cast<long>(::getpid()));
#endif
}

void notifier::notify(std::string_view state) {
    if (socket_.empty()) return;
#ifdef ISS_HAVE_LIBSYSTEMD
    const int r = sd_notify(0, std::string{state}.c_str());
    if (r >= 0 || warned_) return;
    warned_ = true;
    iss::log::logger{"app"}.warn("sd_notify to {}: {}", socket_, std::strerror(-r));
#else
    auto r = send_notify_datagram(socket_, state);
    if (r || warned_) return;
    warned_ = true;
    iss::log::logger{"app"}.warn("{}", r.error());
#endif
}

}  // namespace iss::app
