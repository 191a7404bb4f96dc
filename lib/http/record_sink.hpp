// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Where the TLS record writer of lib/http/client.cpp (`tls_record_writer`) puts the records
/// OpenSSL seals: straight onto the socket while it takes them, the rest kept in order for a
/// write that waits for room. Internal to the http library; a header of its own so its
/// ordering rule is tested without a TLS session (tests/unit/http/record_sink_test.cpp).

#include <string>
#include <string_view>

namespace iss::http::detail {

/// One connection's record output while a request body is sealed.
struct record_sink {
    int fd = -1;          ///< the connected socket (non-blocking sends: MSG_DONTWAIT)
    std::string pending;  ///< records the socket did not take yet, in order
    int send_errno = 0;   ///< the errno of a send(2) that failed for another reason than room

    /// Sends `record` now if nothing waits before it, as much as the socket takes; what it
    /// does not take (and every record after it, until `pending` is written and cleared) is
    /// appended to `pending`. False when send(2) failed (`send_errno`) or memory ran out:
    /// the connection is then unusable.
    [[nodiscard]] bool write(std::string_view record) noexcept;
};

}  // namespace iss::http::detail
