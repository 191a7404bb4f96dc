// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// systemd's notification protocol (sd_notify(3)): READY=1, STATUS=..., WATCHDOG=1,
/// STOPPING=1, EXTEND_TIMEOUT_USEC=... sent as one datagram per call to the AF_UNIX socket
/// named by $NOTIFY_SOCKET (a path, or `@name` for the abstract namespace). With libsystemd at
/// build time (ISS_HAVE_LIBSYSTEMD), sd_notify and sd_watchdog_enabled do the work; without
/// it the same protocol is spoken here. Without $NOTIFY_SOCKET every call is a no-op, so
/// the daemon runs the same under Docker, Kubernetes or a shell.

#include "common/error.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace iss::app {

/// Sends `state` ("READY=1\nSTATUS=...") as one datagram to the AF_UNIX socket `socket_path`
/// (`@` first = abstract namespace). The datagram protocol itself, used when libsystemd is
/// not there; errors name the socket and the reason.
[[nodiscard]] result<void> send_notify_datagram(std::string_view socket_path, std::string_view state);

/// The watchdog interval systemd asks for ($WATCHDOG_USEC, when $WATCHDOG_PID is unset or
/// names this process `pid`); nullopt when there is none. `env` looks a variable up.
[[nodiscard]] std::optional<std::chrono::microseconds> watchdog_from_env(
    const std::function<std::optional<std::string>(std::string_view)>& env, long pid);

/// The daemon's connection to its service manager.
class notifier {
public:
    /// Reads $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID.
    notifier();
    /// True when a service manager listens ($NOTIFY_SOCKET set).
    [[nodiscard]] bool enabled() const noexcept { return !socket_.empty(); }
    /// Sends `state` (newline-separated assignments); failures are logged once at warn.
    void notify(std::string_view state);
    /// The interval at which systemd expects WATCHDOG=1 (send at half of it); nullopt: none.
    [[nodiscard]] std::optional<std::chrono::microseconds> watchdog() const noexcept { return watchdog_; }

private:
    std::string socket_;
    std::optional<std::chrono::microseconds> watchdog_;
    bool warned_ = false;
};

}  // namespace iss::app
