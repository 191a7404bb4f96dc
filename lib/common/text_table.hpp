// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The plain-text table of the command-line reports (`lag`, `verify`: pipeline/lag.cpp,
/// pipeline/verify.cpp): columns separated by two spaces, each as wide as its widest cell
/// (bytes: the cells are ASCII names and numbers), one row a line.

#include <span>
#include <string>
#include <vector>

namespace iss {

/// Where a column's cells stand in its width.
enum class text_align : unsigned char {
    left,   ///< text: padded on the right, except in the last column (no trailing blanks)
    right,  ///< numbers: padded on the left
};

/// Renders `rows` (the first one is the header) as lines ending in '\n'.
/// \pre every row has `align.size()` cells.
[[nodiscard]] std::string render_text_table(const std::vector<std::vector<std::string>>& rows,
                                            std::span<const text_align> align);

}  // namespace iss
