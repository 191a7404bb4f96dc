// SPDX-License-Identifier: Apache-2.0
#include "pipeline/adapters/iggy_ports.hpp"

#include "iggy/error.hpp"
#include "proto/error.hpp"

#include "catch2_compat.hpp"

namespace pl = iss::pipeline;

namespace {
iss::error server(std::uint32_t code) {
    return iss::error{iss::error_code{static_cast<int>(code), iss::proto::server_category()}};
}
}  // namespace

TEST_CASE("iggy adapter: 3022 and 5006 mean not the owner; transport errors retry; the rest fails",
          "[pipeline][iggy_ports][inv5]") {
    CHECK(pl::offset_status_of(server(3022)) == pl::offset_status::not_owner);
    CHECK(pl::offset_status_of(server(5006)) == pl::offset_status::not_owner);
    CHECK(pl::offset_status_of(server(30)) == pl::offset_status::retryable);
    CHECK(pl::offset_status_of(iss::error{iss::iggy::errc::connection_lost}) == pl::offset_status::retryable);
    CHECK(pl::offset_status_of(server(4100)) == pl::offset_status::fatal);
    CHECK(pl::source_status_of(server(5006)) == pl::source_status::not_member);
    CHECK(pl::source_status_of(iss::error{iss::iggy::errc::timeout}) == pl::source_status::retryable);
    CHECK(pl::source_status_of(server(2010)) == pl::source_status::fatal);
}

TEST_CASE("iggy adapter: 5000 (the group went with its topic or stream) means join again, and not the owner",
          "[pipeline][iggy_ports][inv5]") {
    // Iggy 0.8 answers a member's poll and store with ConsumerGroupIdNotFound once the topic
    // (or its stream) was deleted and created again: joining again creates the group.
    CHECK(pl::source_status_of(server(5000)) == pl::source_status::not_member);
    CHECK(pl::offset_status_of(server(5000)) == pl::offset_status::not_owner);
}
