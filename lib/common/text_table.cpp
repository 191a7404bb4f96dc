// SPDX-License-Identifier: Apache-2.0
#include "common/text_table.hpp"

#include <algorithm>
#include <cassert>

namespace iss {

std::string render_text_table(const std::vector<std::vector<std::string>>& rows, std::span<const text_align> align) {
    std::vector<std::size_t> width(align.size(), 0);
    for (const auto& row : rows) {
        assert(row.size() == align.size());
        for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    std::string out;
    for (const auto& row : rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            const std::size_t pad = width[i] - row[i].size();
            const bool last = i + 1 == row.size();
            if (align[i] == text_align::right) out.append(pad, ' ');
            out += row[i];
            if (align[i] == text_align::left && !last) out.append(pad, ' ');
            out += last ? "\n" : "  ";
        }
    }
    return out;
}

}  // namespace iss
