// SPDX-License-Identifier: Apache-2.0
// The one text table (common/text_table.hpp): widths, alignment, no trailing blanks.
#include "common/text_table.hpp"

#include "catch2_compat.hpp"

#include <array>

TEST_CASE("text table: columns as wide as their widest cell, two spaces apart", "[text_table]") {
    using enum iss::text_align;
    const std::array align{left, right, left};
    const std::vector<std::vector<std::string>> rows{
        {"NAME", "N", "STATUS"}, {"a", "1000", "ok"}, {"bbbbbb", "7", "PROBLEM"}};
    CHECK(iss::render_text_table(rows, align) ==
          "NAME       N  STATUS\n"
          "a       1000  ok\n"
          "bbbbbb     7  PROBLEM\n");
}

TEST_CASE("text table: a right-aligned last column is padded on the left; the header alone renders", "[text_table]") {
    using enum iss::text_align;
    const std::array align{left, right};
    CHECK(iss::render_text_table({{"STREAM", "LAG"}, {"s", "12345"}}, align) == "STREAM    LAG\ns       12345\n");
    CHECK(iss::render_text_table({{"STREAM", "LAG"}}, align) == "STREAM  LAG\n");
}
