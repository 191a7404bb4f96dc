// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Starts `iggy-test-broker` as a child process for the integration tests and reads the port
/// it reports on its first stdout line (`listening on 127.0.0.1:PORT`). Shared by
/// iggy_test.cpp, iggy_g2_test.cpp and pipeline_broker_test.cpp.

#include "catch2_compat.hpp"
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

namespace iss::test {

/// A started broker: its pid (the caller kills and reaps it) and the port it listens on.
struct broker_child {
    pid_t pid = -1;
    std::uint16_t port = 0;
};

/// Runs `binary --listen 127.0.0.1:<port> <extra...>` (port 0: the OS picks one) and waits for
/// its first stdout line. Fails the current test when the broker does not report a port.
inline broker_child spawn_broker(const std::string& binary, std::uint16_t port, const std::vector<std::string>& extra) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::vector<std::string> argv{binary, "--listen", "127.0.0.1:" + std::to_string(port)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    broker_child child;
    child.pid = ::fork();
    REQUIRE(child.pid >= 0);
    if (child.pid == 0) {
        ::dup2(fds[1], 1);
        ::close(fds[0]);
        ::close(fds[1]);
        std::vector<char*> cargv;
        for (auto& a : argv) cargv.push_back(a.data());
        cargv.push_back(nullptr);
        ::execv(cargv[0], cargv.data());
        ::_exit(127);
    }
    ::close(fds[1]);
    std::string line;
    char ch = 0;
    while (::read(fds[0], &ch, 1) == 1 && ch != '\n') line += ch;
    ::close(fds[0]);
    const std::string prefix = "listening on 127.0.0.1:";
    INFO("broker said: " << line);
    REQUIRE(line.rfind(prefix, 0) == 0);
    child.port = static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));
    REQUIRE(child.port != 0);
    return child;
}

}  // namespace iss::test
