// SPDX-License-Identifier: Apache-2.0
#include "config/text_scan.hpp"

namespace iss::config::detail {

text_scan scan_text(std::string_view yaml) {
    text_scan out;
    int line = 1;
    int depth = 0;
    char quote = 0;
    int quote_line = 0;
    for (std::size_t i = 0; i < yaml.size(); ++i) {
        const char c = yaml[i];
        if (c == '\n') ++line;
        if (quote != 0) {
            if (quote == '"' && c == '\\') ++i;
            else if (c == quote) quote = 0;
            continue;
        }
        if (c == '#' && (i == 0 || yaml[i - 1] == ' ' || yaml[i - 1] == '\t' || yaml[i - 1] == '\n')) {
            while (i + 1 < yaml.size() && yaml[i + 1] != '\n') ++i;
            continue;
        }
        if (c == '"' || c == '\'') {
            // A quote opens a quoted scalar only at the start of one (not inside `it's`).
            const char prev = i == 0 ? ' ' : yaml[i - 1];
            if (prev == ' ' || prev == '\t' || prev == '\n' || prev == ':' || prev == ',' || prev == '[' ||
                prev == '{' || prev == '-') {
                quote = c;
                quote_line = line;
            }
            continue;
        }
        if (c == '$' && i + 1 < yaml.size() && yaml[i + 1] == '{' && depth > 0 && !out.env_ref_in_flow) {
            const auto close = yaml.find('}', i);
            out.env_ref_in_flow =
                std::make_pair(std::string{yaml.substr(i, close == std::string_view::npos ? 2 : close - i + 1)}, line);
        }
        if (c == '{' || c == '[') ++depth;
        if ((c == '}' || c == ']') && depth > 0) --depth;
    }
    if (quote != 0) {
        out.unclosed_quote = quote;
        out.unclosed_quote_line = quote_line;
    }
    return out;
}

}  // namespace iss::config::detail
