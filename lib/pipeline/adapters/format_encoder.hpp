// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The production encoders: `format::writer` (json_lines / json_array / raw / csv / parquet /
/// avro, gzip / zstd) behind
/// the pipeline's `record_encoder` port. Reads the `proto::message_view` the Iggy adapter put
/// in `message::view`; with `verify_checksum`, a message whose XXH3 checksum does not match
/// is a bad message (servers with encryption at rest may not match: iggy.verify_checksum).

#include "format/writer.hpp"
#include "pipeline/ports.hpp"

namespace iss::pipeline {

class format_encoders final : public encoder_factory {
public:
    format_encoders(format::writer_options o, bool verify_checksum) : o_{std::move(o)}, verify_{verify_checksum} {}
    [[nodiscard]] std::unique_ptr<record_encoder> make() const override;
    [[nodiscard]] std::string content_type() const override { return std::string{format::content_type(o_)}; }
    [[nodiscard]] std::uint64_t state_bytes() const override { return format::codec_memory(o_); }
    [[nodiscard]] std::string extension() const { return format::extension(o_); }

private:
    format::writer_options o_;
    bool verify_;
};

}  // namespace iss::pipeline
