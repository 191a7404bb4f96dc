// SPDX-License-Identifier: Apache-2.0
#include "sigv4/error.hpp"

namespace iss::sigv4 {

namespace {
const char* message(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::missing_host: return "the request has no Host header; SigV4 always signs Host";
        case errc::reserved_header:
            return "the request already carries a header the signer adds itself (Authorization, X-Amz-Date, "
                   "x-amz-content-sha256, X-Amz-Security-Token); remove it before signing";
        case errc::reserved_query_param:
            return "the request already carries an X-Amz-* presign parameter; remove it before presigning";
        case errc::invalid_header_name: return "header name is empty or not an HTTP token";
        case errc::invalid_path: return "path is empty or does not start with '/'";
        case errc::bad_percent_encoding: return "'%' not followed by two hex digits";
        case errc::invalid_payload_hash: return "payload hash is not 64 lower-case hex digits";
        case errc::invalid_expiry: return "presign expiry must be between 1 second and 7 days (604800 s)";
        case errc::invalid_payload_mode: return "payload mode does not fit this operation";
        case errc::missing_credentials: return "access key id or secret access key is empty; check the credentials";
        case errc::invalid_scope: return "region or service is empty or contains '/'; check s3.region";
        case errc::chunk_after_final: return "aws-chunked: chunk signed after the final (empty) chunk";
    }
    return nullptr;
}
}  // namespace

const boost::system::error_category& category() noexcept {
    static const simple_category cat{"sigv4", message};
    return cat;
}

}  // namespace iss::sigv4
