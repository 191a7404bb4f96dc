// SPDX-License-Identifier: Apache-2.0
// common/buffer_pool.hpp: which kept buffer a take returns, and the bounds on what is kept.
#include "common/buffer_pool.hpp"

#include "catch2_compat.hpp"

#include <cstddef>
#include <vector>

namespace {
std::vector<std::byte> sized(std::size_t n) { return std::vector<std::byte>(n); }
}  // namespace

TEST_CASE("buffer_pool: the smallest kept buffer that fits, else the largest; contents and size kept",
          "[common][buffer_pool]") {
    iss::buffer_pool<std::vector<std::byte>> pool{8, 1u << 20};
    CHECK_FALSE(pool.take(10).has_value());
    pool.give(sized(1000));
    pool.give(sized(100));
    pool.give(sized(5000));
    CHECK(pool.kept_bytes() == 6100);
    auto a = pool.take(500);
    REQUIRE(a);
    CHECK(a->capacity() == 1000);
    CHECK(a->size() == 1000);  // the size is kept: resizing up to it writes nothing
    auto b = pool.take(9000);  // none fits: the largest, for the caller to grow
    REQUIRE(b);
    CHECK(b->capacity() == 5000);
    CHECK(pool.kept_bytes() == 100);
    pool.release();
    CHECK(pool.kept_bytes() == 0);
    CHECK_FALSE(pool.take(1).has_value());
}

TEST_CASE("buffer_pool: at most max_buffers and max_bytes are kept; the rest is freed", "[common][buffer_pool]") {
    iss::buffer_pool<std::vector<std::byte>> by_count{2, 1u << 20};
    by_count.give(sized(10));
    by_count.give(sized(20));
    by_count.give(sized(30));
    CHECK(by_count.kept_bytes() == 30);
    iss::buffer_pool<std::vector<std::byte>> by_bytes{8, 100};
    by_bytes.give(sized(60));
    by_bytes.give(sized(60));
    by_bytes.give(sized(40));
    CHECK(by_bytes.kept_bytes() == 100);
    by_bytes.give(std::vector<std::byte>{});  // nothing allocated: nothing to keep
    CHECK(by_bytes.take(0)->capacity() > 0);
}
