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

bool is_auth_code(std::uint32_t code) noexcept {
    return (code >= 40 && code <= 47) || code == 53 || code == 54;
}

outcome classify(const iss::error& e) noexcept {
    if (auto code = server_code(e)) {
        switch (*code) {
            case 8:   // Disconnected: the server is shutting down
            case 30:  // StaleClient: reconnect, log in, join again
            case 57:  // TransientNotCommitted (G2)
            case 58:  // TransientNotAccepted (G2)
                return outcome::retry;
            case 20:    // ResourceNotFound
            case 1009:  // StreamIdNotFound
            case 1010:
            case 2010:  // TopicIdNotFound
            case 2011:
            case 3007:  // PartitionNotFound
            case 5000:  // ConsumerGroupIdNotFound
            case 5003:
                return outcome::not_found;
            default: return outcome::fail;
        }
    }
    if (e.code().category() == client_category()) {
        switch (static_cast<errc>(e.code().value())) {
            case errc::connection_failed:
            case errc::connection_lost:
            case errc::timeout:
            case errc::protocol_error: return outcome::retry;
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
