// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The production `key_namer`: `naming.key` (format::key_template) with `s3.prefix`, the
/// format's extension and the record placeholders read from each message by
/// format::record_reader (`naming.time_source`, `naming.timezone`, `naming.missing_value`).
/// Deterministic by construction (docs/architecture.md §3): the template knows no upload time, end
/// offset or random placeholder, and everything else comes from the message itself.

#include "format/key_fields.hpp"
#include "format/key_template.hpp"
#include "pipeline/ports.hpp"

#include <optional>
#include <string>

namespace iss::pipeline {

class template_key_namer final : public key_namer {
public:
    /// `ext` without its dot (`jsonl`, `jsonl.gz`). Record placeholders render
    /// `format::default_missing_value` and time is Iggy's append time in UTC.
    template_key_namer(format::key_template t, std::string prefix, std::string ext)
        : template_key_namer(std::move(t), std::move(prefix), std::move(ext), {}, nullptr,
                             std::string{format::default_missing_value}) {}
    /// \param tz the zone of the time placeholders (date::locate_zone; outlives the namer);
    ///        null: UTC.
    template_key_namer(format::key_template t, std::string prefix, std::string ext, format::time_source source,
                       const date::time_zone* tz, std::string missing);

    [[nodiscard]] object_key key(const partition_ref& p, std::uint64_t first_offset) const override {
        return key_in(p, first_offset, 0);
    }
    [[nodiscard]] object_key key_in(const partition_ref& p, std::uint64_t first_offset,
                                    std::uint64_t topic_created) const override {
        format::key_values v{prefix_, p.stream, p.topic, p.partition, first_offset, ext_};
        v.topic_created = topic_created;
        return object_key{t_.render(v)};
    }
    [[nodiscard]] result<encoded_partition> encode(const partition_ref& p, const message& m) const override;
    [[nodiscard]] object_key key_for(const partition_ref& p, const message& first) const override;
    [[nodiscard]] bool closes_on_later_bucket() const override { return closes_on_bucket_; }
    [[nodiscard]] bool record_dependent() const override { return t_.uses_record(); }

private:
    format::key_template t_;
    std::string prefix_;
    std::string ext_;
    bool closes_on_bucket_ = false;
    // The namer is used from the event-loop thread only; the reader keeps parse buffers.
    mutable format::record_reader reader_;
    mutable format::record_values values_;
};

}  // namespace iss::pipeline
