// SPDX-License-Identifier: Apache-2.0
#include "format/error.hpp"

namespace iss::format {

namespace {
const char* format_message(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::bad_key_template: return "invalid key template (check naming.key)";
        case errc::bad_payload: return "payload does not fit format.payload (a bad message)";
        case errc::bad_headers: return "malformed user headers (a bad message)";
        case errc::compression_failed: return "compression failed";
        case errc::bad_value: return "value does not fit format.schema (a bad message)";
        case errc::bad_record_time: return "the record time cannot be read (check naming.time_source; a bad message)";
    }
    return nullptr;
}
}  // namespace

const boost::system::error_category& format_category() noexcept {
    static const simple_category cat{"format", format_message};
    return cat;
}

}  // namespace iss::format
