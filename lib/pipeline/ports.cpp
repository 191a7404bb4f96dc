// SPDX-License-Identifier: Apache-2.0
// The names of the ports' outcomes (ports.hpp), for logs.
#include "pipeline/ports.hpp"

namespace iss::pipeline {

std::string_view to_string(store_status s) noexcept {
    switch (s) {
        case store_status::ok: return "ok";
        case store_status::exists: return "exists";
        case store_status::not_found: return "not_found";
        case store_status::retryable: return "retryable";
        case store_status::fatal: return "fatal";
    }
    return "?";
}

std::string_view to_string(offset_status s) noexcept {
    switch (s) {
        case offset_status::ok: return "ok";
        case offset_status::not_owner: return "not_owner";
        case offset_status::retryable: return "retryable";
        case offset_status::fatal: return "fatal";
    }
    return "?";
}

std::string_view to_string(source_status s) noexcept {
    switch (s) {
        case source_status::ok: return "ok";
        case source_status::not_member: return "not_member";
        case source_status::retryable: return "retryable";
        case source_status::fatal: return "fatal";
    }
    return "?";
}

std::string_view to_string(table_status s) noexcept {
    switch (s) {
        case table_status::ok: return "ok";
        case table_status::retryable: return "retryable";
        case table_status::fatal: return "fatal";
        case table_status::deferred: return "deferred";
    }
    return "?";
}

}  // namespace iss::pipeline
