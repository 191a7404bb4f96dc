// SPDX-License-Identifier: Apache-2.0
#include "pipeline/adapters/format_encoder.hpp"

#include "pipeline/error.hpp"

namespace iss::pipeline {

namespace {
class format_encoder final : public record_encoder {
public:
    format_encoder(const format::writer_options& o, bool verify, const std::optional<iceberg::table_schema>& schema)
        : w_{o}, verify_{verify} {
        if (schema) collector_.emplace(*schema);
    }
    void begin(std::string& out) override {
        if (collector_) collector_->reset();
        stats_.reset();
        w_.begin(out);
    }
    result<void> append(const message& m, const partition_ref& p, std::string& out) override {
        const proto::message_view* v = m.view;
        if (!v) return error{errc::bad_message, fmt::format("offset {}: no message view", m.offset)};
        if (verify_ && !v->checksum_ok())
            return error{errc::bad_message,
                         fmt::format("offset {}: checksum mismatch (iggy.verify_checksum; servers with encryption "
                                     "at rest do not match)",
                                     m.offset)};
        auto r = w_.append(*v, format::record_source{p.stream, p.topic, p.partition}, out);
        if (r && collector_) collector_->add(w_.last_row());
        return r;
    }
    void finish(std::string& out) override {
        w_.finish(out);
        if (!collector_) return;
        auto s = std::make_shared<iceberg_object_stats>();
        s->columns = collector_->stats();
        const auto bytes = w_.column_bytes();
        collector_->add_column_sizes(s->columns, bytes);
        stats_ = std::move(s);
    }
    [[nodiscard]] std::uint64_t buffered() const override { return w_.buffered_bytes(); }
    [[nodiscard]] std::uint64_t memory() const override { return w_.buffered_bytes() + w_.codec_bytes(); }
    [[nodiscard]] std::shared_ptr<const object_stats> stats() const override { return stats_; }

private:
    format::writer w_;
    bool verify_;
    std::optional<iceberg::stats_collector> collector_;
    std::shared_ptr<const object_stats> stats_;
};
}  // namespace

std::unique_ptr<record_encoder> format_encoders::make() const {
    return std::make_unique<format_encoder>(o_, verify_, stats_schema_);
}

}  // namespace iss::pipeline
