// SPDX-License-Identifier: Apache-2.0
#pragma once
// A scan of a configuration file's raw text, before YAML parsing (lib/config/load.cpp).

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace iss::config::detail {

/// What a scan of the raw text finds that YAML parsers answer badly (yaml-cpp takes a quoted
/// scalar left open as running to the end of the file, so the next lines, secrets among them,
/// become one value that later messages quote).
struct text_scan {
    /// An unquoted `${...}` inside a flow collection (`{level: ${X}}`, `[${X}]`): there `{` and
    /// `}` are YAML syntax, so the reference breaks the collection. The reference and its line.
    std::optional<std::pair<std::string, int>> env_ref_in_flow;
    int unclosed_quote_line = 0;  ///< the line (1-based) of a quote never closed; 0: none
    char unclosed_quote = 0;      ///< that quote character
};

/// Scans `yaml` for `text_scan`'s findings. Quotes and comments are skipped; block context is
/// fine for `${...}` (a plain scalar there may contain braces). A quote opens a quoted scalar
/// only at the start of one (YAML 1.2 §7.3), so `it's` opens nothing.
[[nodiscard]] text_scan scan_text(std::string_view yaml);

}  // namespace iss::config::detail
