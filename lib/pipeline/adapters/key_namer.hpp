#pragma once
/// \file
/// The production `key_namer`: `naming.key` (format::key_template) with `s3.prefix` and the
/// format's extension. Deterministic by construction (design.md §3.2): the template knows no
/// time, end offset or random placeholder, and the port passes only partition + first offset.

#include "format/key_template.hpp"
#include "pipeline/ports.hpp"

#include <string>

namespace iss::pipeline {

class template_key_namer final : public key_namer {
public:
    /// `ext` without its dot (`jsonl`, `jsonl.gz`).
    template_key_namer(format::key_template t, std::string prefix, std::string ext)
        : t_{std::move(t)}, prefix_{std::move(prefix)}, ext_{std::move(ext)} {}
    [[nodiscard]] object_key key(const partition_ref& p, std::uint64_t first_offset) const override {
        return object_key{t_.render(format::key_values{prefix_, p.stream, p.topic, p.partition, first_offset, ext_})};
    }

private:
    format::key_template t_;
    std::string prefix_;
    std::string ext_;
};

}  // namespace iss::pipeline
