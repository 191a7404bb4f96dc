// SPDX-License-Identifier: Apache-2.0
#include "pipeline/lag.hpp"

#include "catch2_compat.hpp"

namespace pl = iss::pipeline;

TEST_CASE("lag: empty partition 0, nothing committed = every message, else head - committed", "[pipeline][lag]") {
    CHECK(pl::compute_lag(0, 0, std::nullopt) == 0);
    CHECK(pl::compute_lag(0, 0, 0u) == 0);
    CHECK(pl::compute_lag(1, 0, std::nullopt) == 1);  // one message at offset 0, nothing committed
    CHECK(pl::compute_lag(1, 0, 0u) == 0);
    CHECK(pl::compute_lag(100, 99, 49u) == 50);
    CHECK(pl::compute_lag(100, 99, 99u) == 0);
    CHECK(pl::compute_lag(100, 99, 120u) == 0);
}

TEST_CASE("lag: table and JSON renderings", "[pipeline][lag]") {
    std::vector<pl::lag_row> rows{
        {{"app", "requests", 0}, 10, 9, 4u, 5},
        {{"app", "requests", 1}, 0, 0, std::nullopt, 0},
    };
    const auto t = pl::render_lag_table(rows);
    CHECK(t.find("STREAM  TOPIC     PARTITION  HEAD  COMMITTED  LAG\n") == 0);
    CHECK(t.find("app     requests          0     9          4    5\n") != std::string::npos);
    CHECK(t.find("app     requests          1     -          -    0\n") != std::string::npos);
    CHECK(t.find("total lag: 5") != std::string::npos);
    CHECK(pl::render_lag_json(rows) ==
          "{\"partitions\":[{\"stream\":\"app\",\"topic\":\"requests\",\"partition\":0,\"messages\":10,\"head\":9,"
          "\"committed\":4,\"lag\":5},{\"stream\":\"app\",\"topic\":\"requests\",\"partition\":1,\"messages\":0,"
          "\"head\":null,\"committed\":null,\"lag\":0}],\"total_lag\":5}\n");
}

TEST_CASE("lag: with an Iceberg table, its committed offset beside Iggy's", "[pipeline][lag]") {
    std::vector<pl::lag_row> rows{
        {{"app", "requests", 0}, 10, 9, 4u, 5, true, 6u},           // the table is ahead of Iggy
        {{"app", "requests", 1}, 3, 2, std::nullopt, 3, true, {}},  // nothing in the table yet
    };
    const auto t = pl::render_lag_table(rows);
    CHECK(t.find("STREAM  TOPIC     PARTITION  HEAD  COMMITTED  TABLE  LAG\n") == 0);
    CHECK(t.find("app     requests          0     9          4      6    5\n") != std::string::npos);
    CHECK(t.find("app     requests          1     2          -      -    3\n") != std::string::npos);
    CHECK(pl::render_lag_json(rows) ==
          "{\"partitions\":[{\"stream\":\"app\",\"topic\":\"requests\",\"partition\":0,\"messages\":10,\"head\":9,"
          "\"committed\":4,\"lag\":5,\"table_committed\":6},{\"stream\":\"app\",\"topic\":\"requests\",\"partition\":1,"
          "\"messages\":3,\"head\":2,\"committed\":null,\"lag\":3,\"table_committed\":null}],\"total_lag\":8}\n");
}
