// SPDX-License-Identifier: Apache-2.0
#include "http/record_sink.hpp"

#include <sys/socket.h>

#include <cerrno>

namespace iss::http::detail {

bool record_sink::write(std::string_view record) noexcept {
    std::size_t sent = 0;
    // Behind records already waiting nothing is sent directly: it would overtake them.
    while (pending.empty() && sent < record.size()) {
        const ssize_t r = ::send(fd, record.data() + sent, record.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (r > 0) {
            sent += static_cast<std::size_t>(r);
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            send_errno = errno;
            return false;
        }
        break;  // the socket's buffer is full: the rest waits
    }
    try {
        pending.append(record.substr(sent));
    } catch (...) {
        return false;
    }
    return true;
}

}  // namespace iss::http::detail
