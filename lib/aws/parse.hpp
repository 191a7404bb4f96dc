// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Pure parsing and building for the credential providers (no I/O): the shared config and
/// credentials files (INI), the JSON documents of the container endpoint and IMDS, STS form
/// bodies and their XML answers. Errors are `aws::errc::bad_source` (files) or
/// `aws::errc::bad_response` (documents), naming what was wrong, never a secret.

#include "aws/credentials.hpp"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace iss::aws {

/// One INI file: section name (as written between the brackets, trimmed) -> key -> value.
/// Keys are lower-cased; values trimmed. Comments start with '#' or ';' at the start of a
/// line. Nested (indented) sub-properties (`s3 =` blocks of the config file) are skipped.
using ini_file = std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>>;

/// Parses `text`; `what` names the file in errors ("~/.aws/config line 3: ...").
[[nodiscard]] result<ini_file> parse_ini(std::string_view text, std::string_view what);

/// A JSON credentials document, as the container endpoint and IMDS answer:
/// `{"AccessKeyId", "SecretAccessKey", "Token", "Expiration"}`; IMDS adds `"Code": "Success"`.
/// https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instance-metadata-security-credentials.html
/// https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-iam-roles.html
[[nodiscard]] result<identity> parse_credentials_json(std::string_view body, std::string_view what);

/// An STS query-API parameter list, form-encoded for a POST body
/// (`application/x-www-form-urlencoded`): every name and value UriEncode'd.
[[nodiscard]] std::string form_encode(const std::vector<std::pair<std::string, std::string>>& params);

/// `<AssumeRoleResponse>` / `<AssumeRoleWithWebIdentityResponse>`: the credentials and, in
/// `detail`, the assumed role's ARN ("role arn:aws:sts::123:assumed-role/sink/session").
/// https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html
[[nodiscard]] result<identity> parse_sts_credentials(std::string_view body, std::string_view action);

/// An STS `<ErrorResponse><Error><Code>..</Code><Message>..</Message>`; empty strings when
/// the body is not one.
struct sts_error {
    std::string code;
    std::string message;
};
[[nodiscard]] sts_error parse_sts_error(std::string_view body);

}  // namespace iss::aws
