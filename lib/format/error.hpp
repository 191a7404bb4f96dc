// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Errors of the format module (docs/architecture.md §8.4.1).

#include "common/error.hpp"

namespace iss::format {

enum class errc {
    bad_key_template = 1,  ///< the key template breaks a rule (the detail says which)
    bad_payload,           ///< a payload does not fit `format.payload` (e.g. not JSON under `json`)
    bad_headers,           ///< a message's user-headers block is malformed
    compression_failed,    ///< zlib (or a later codec) reported an error
    bad_value,             ///< a value does not fit its schema column (the detail names column and offset)
    bad_record_time,       ///< a message's record time (`naming.time_source`) cannot be read (a bad message)
};

const boost::system::error_category& format_category() noexcept;
inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), format_category()}; }

}  // namespace iss::format

namespace boost::system {
template <>
struct is_error_code_enum<iss::format::errc> : std::true_type {};
}  // namespace boost::system
