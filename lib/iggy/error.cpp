// SPDX-License-Identifier: Apache-2.0
#include "iggy/error.hpp"

#include "proto/error.hpp"

#include <fmt/format.h>

namespace iss::iggy {

namespace {

const char* client_message(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::connection_failed:
            return "cannot connect to the Iggy server (check iggy.address, that the server runs, and TLS settings)";
        case errc::connection_lost: return "the connection to the Iggy server broke during a request";
        case errc::timeout: return "the Iggy server did not answer in time (connection closed)";
        case errc::protocol_error: return "the Iggy server sent a frame that cannot be read (connection closed)";
        case errc::closed: return "the Iggy client is closed";
        case errc::invalid_request: return "the request cannot be encoded";
        case errc::certificate_rejected:
            return "the Iggy server's TLS certificate was rejected (check iggy.tls.ca_file and iggy.tls.server_name, "
                   "and that the certificate has not expired)";
    }
    return "unknown Iggy client error";
}

constexpr iss::simple_category client_cat{"iggy-client", &client_message};

}  // namespace

const boost::system::error_category& client_category() noexcept { return client_cat; }

std::optional<std::uint32_t> server_code(const iss::error& e) noexcept {
    if (e.code().category() == proto::server_category()) return static_cast<std::uint32_t>(e.code().value());
    return std::nullopt;
}

bool is_server_error(const iss::error& e, proto::server_errc c) noexcept {
    return server_code(e) == static_cast<std::uint32_t>(c);
}

bool is_auth_code(std::uint32_t code) noexcept {
    using se = proto::server_errc;
    switch (static_cast<se>(code)) {
        case se::unauthenticated:
        case se::unauthorized:
        case se::invalid_credentials:
        case se::invalid_username:
        case se::invalid_password:
        case se::invalid_user_status:
        case se::user_already_exists:
        case se::user_inactive:
        case se::invalid_personal_access_token:
        case se::personal_access_token_expired: return true;
        default: return false;
    }
}

bool ends_session(std::uint32_t status) noexcept {
    using se = proto::server_errc;
    const auto s = static_cast<se>(status);
    return s == se::disconnected || s == se::stale_client || s == se::client_not_found;
}

outcome classify(const iss::error& e) noexcept {
    if (auto code = server_code(e)) {
        using se = proto::server_errc;
        switch (static_cast<se>(*code)) {
            case se::disconnected:             // the server is shutting down
            case se::stale_client:             // reconnect, log in, join again
            case se::transient_not_committed:  // G2
            case se::transient_not_accepted:   // G2
                return outcome::retry;
            case se::resource_not_found:
            case se::stream_id_not_found:
            case se::stream_name_not_found:
            case se::topic_id_not_found:
            case se::topic_name_not_found:
            case se::partition_not_found:
            case se::consumer_group_id_not_found:
            case se::consumer_group_name_not_found: return outcome::not_found;
            default: return outcome::fail;
        }
    }
    if (e.code().category() == client_category()) {
        switch (static_cast<errc>(e.code().value())) {
            case errc::connection_failed:
            case errc::connection_lost:
            case errc::timeout:
            case errc::protocol_error:
            case errc::certificate_rejected: return outcome::retry;
            case errc::closed:
            case errc::invalid_request: return outcome::fail;
        }
    }
    return outcome::fail;
}

std::string describe(const iss::error& e) {
    if (auto code = server_code(e)) {
        auto s = fmt::format("{} ({})", proto::server_error_name(*code), *code);
        if (!e.detail().empty()) s += ": " + e.detail();
        return s;
    }
    return e.message();
}

}  // namespace iss::iggy
