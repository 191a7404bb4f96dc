// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Redaction of signing artefacts before they are logged (docs/architecture.md §8.5.4): the session token in
/// canonical requests and header dumps, and the credential, token and signature values of
/// presigned URLs. The secret key itself never appears in any artefact.

#include <string>
#include <string_view>

namespace iss::sigv4 {

/// `text` (a canonical request, or a header dump with one "name:value" per line) with the value
/// of every `x-amz-security-token` / `authorization` header line (any case) and of every
/// `X-Amz-Security-Token=` / `X-Amz-Signature=` / `X-Amz-Credential=` query parameter replaced
/// by `****`.
[[nodiscard]] std::string redact_signing_text(std::string_view text);

}  // namespace iss::sigv4
