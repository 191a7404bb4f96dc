// SPDX-License-Identifier: Apache-2.0
#include "pipeline/adapters/format_encoder.hpp"

#include "pipeline/error.hpp"

namespace iss::pipeline {

namespace {
class format_encoder final : public record_encoder {
public:
    format_encoder(const format::writer_options& o, bool verify) : w_{o}, verify_{verify} {}
    void begin(std::string& out) override { w_.begin(out); }
    result<void> append(const message& m, const partition_ref& p, std::string& out) override {
        const proto::message_view* v = m.view;
        if (!v) return error{errc::bad_message, fmt::format("offset {}: no message view", m.offset)};
        if (verify_ && !v->checksum_ok())
            return error{errc::bad_message,
                         fmt::format("offset {}: checksum mismatch (iggy.verify_checksum; servers with encryption "
                                     "at rest do not match)",
                                     m.offset)};
        return w_.append(*v, format::record_source{p.stream, p.topic, p.partition}, out);
    }
    void finish(std::string& out) override { w_.finish(out); }
    [[nodiscard]] std::uint64_t buffered() const override { return w_.buffered_bytes(); }
    [[nodiscard]] std::uint64_t memory() const override { return w_.buffered_bytes() + w_.codec_bytes(); }

private:
    format::writer w_;
    bool verify_;
};
}  // namespace

std::unique_ptr<record_encoder> format_encoders::make() const { return std::make_unique<format_encoder>(o_, verify_); }

}  // namespace iss::pipeline
