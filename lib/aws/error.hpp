// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Errors of the credential providers (lib/aws). Each names what was looked at (a file, a
/// variable, an endpoint) in the detail, never a secret.

#include "common/error.hpp"

namespace iss::aws {

enum class errc {
    not_configured = 1,  ///< the source has nothing to offer here (variables unset, file absent): the chain moves on
    bad_source,          ///< the source is set up but wrong (unreadable token file, malformed profile, bad URL)
    fetch_failed,        ///< the credential endpoint did not answer usefully (status, transport)
    bad_response,        ///< the endpoint answered something that is not credentials
    sts_rejected,        ///< STS refused the request (AccessDenied, InvalidIdentityToken...)
    expired,             ///< the credentials obtained are already expired
    none_found,          ///< the chain found nothing; the detail lists every source tried
};

const boost::system::error_category& aws_category() noexcept;
inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), aws_category()}; }

}  // namespace iss::aws

namespace boost::system {
template <>
struct is_error_code_enum<iss::aws::errc> : std::true_type {};
}  // namespace boost::system
