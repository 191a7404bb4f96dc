// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Errors of the SigV4 signer (docs/architecture.md §8.4.1). Every function of `iss::sigv4` that can fail on
/// its input returns `iss::result<T>` with one of these codes; the `iss::error` detail names
/// the header, parameter or value concerned (never a secret).

#include "common/error.hpp"

#include <type_traits>

namespace iss::sigv4 {

/// What can be wrong with a request or parameters given to the signer.
enum class errc {
    missing_host = 1,      ///< the request has no `Host` header (SigV4 always signs it)
    reserved_header,       ///< the request already carries a header the signer adds itself
    reserved_query_param,  ///< a presign request already carries an `X-Amz-*` signing parameter
    invalid_header_name,   ///< a header name is empty or holds characters outside an HTTP token
    invalid_path,          ///< the path is empty or does not start with '/'
    bad_percent_encoding,  ///< a '%' is not followed by two hex digits
    invalid_payload_hash,  ///< the given payload hash is not 64 lower-case hex digits
    invalid_expiry,        ///< a presign expiry is outside 1 s .. 7 days
    invalid_payload_mode,  ///< the payload mode does not fit the operation (e.g. presign + streaming)
    missing_credentials,   ///< the access key id or the secret access key is empty
    invalid_scope,         ///< the region or the service is empty or contains '/'
    chunk_after_final,     ///< an aws-chunked chunk was signed after the final (empty) chunk
};

const boost::system::error_category& category() noexcept;
inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), category()}; }

}  // namespace iss::sigv4

namespace boost::system {
template <>
struct is_error_code_enum<iss::sigv4::errc> : std::true_type {};
}  // namespace boost::system
