// SPDX-License-Identifier: Apache-2.0
#include "aws/error.hpp"

namespace iss::aws {

namespace {
const char* aws_message(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::not_configured: return "credential source not configured here";
        case errc::bad_source: return "credential source misconfigured";
        case errc::fetch_failed: return "credential endpoint unreachable or failing";
        case errc::bad_response: return "credential endpoint answered something that is not credentials";
        case errc::sts_rejected: return "STS refused the request (check the role's trust policy and permissions)";
        case errc::expired: return "the credentials obtained have already expired";
        case errc::none_found: return "no AWS credentials found (see s3.credentials.source)";
    }
    return nullptr;
}
}  // namespace

const boost::system::error_category& aws_category() noexcept {
    static const simple_category cat{"aws", aws_message};
    return cat;
}

}  // namespace iss::aws
