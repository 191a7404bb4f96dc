// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The production `object_store`, the one store layer over `s3::client` for one bucket: maps
/// the client's final errors (`s3::status_of`) to `store_status` (cancellation is rethrown,
/// never an outcome) and `object_range` to user metadata. The client applies the retry
/// policy and the per-operation deadline (`s3.retry.deadline`); the multipart sequence is
/// the client's (`s3::client::upload_multipart`).

#include "pipeline/ports.hpp"
#include "s3/client.hpp"

#include <string>

namespace iss::pipeline {

class s3_store final : public object_store {
public:
    /// `c` outlives this object and runs on the same executor.
    s3_store(s3::client& c, std::string bucket) : c_{c}, bucket_{std::move(bucket)} {}

    task<store_result<none>> put_object(const object_key& key, std::string_view body, const object_range& range,
                                        std::string_view content_type, bool if_none_match,
                                        body_digests digests) override;
    task<store_result<none>> put_multipart(const object_key& key, std::uint64_t size, std::uint64_t part_size,
                                           part_reader read, const object_range& range, std::string_view content_type,
                                           bool if_none_match) override;
    task<store_result<user_metadata>> head_object(const object_key& key) override;

private:
    s3::client& c_;
    std::string bucket_;
};

/// The part hashers for a writer feeding `c` (writer_ports::part_hashers): each computes,
/// with one `s3::body_digester`, what `c.digests_needed()` says its requests need (CRC-32C or
/// MD5, and a signed payload's SHA-256). Empty when they need none. Read `c` after the
/// capability probe (`s3.checksum: auto` changes the checksum).
[[nodiscard]] part_hasher_factory part_hashers_for(const s3::client& c);

/// The store status for a final `s3::client` error; throws on cancellation (docs/architecture.md §8.4.5).
[[nodiscard]] store_status store_status_of(const iss::error& e);

}  // namespace iss::pipeline
