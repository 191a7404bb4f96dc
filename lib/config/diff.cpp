// SPDX-License-Identifier: Apache-2.0
// Which top-level sections differ between two configurations (a reload's decision).
#include "config/config.hpp"

namespace iss::config {

std::vector<std::string> changed_sections(const sink_config& a, const sink_config& b) {
    std::vector<std::string> out;
    const auto note = [&](const char* name, bool same) {
        if (!same) out.emplace_back(name);
    };
    // In file order (schema.hpp); a new section must be added here and to sink_config's ==.
    note("iggy", a.iggy == b.iggy);
    note("sources", a.sources == b.sources);
    note("s3", a.s3 == b.s3);
    note("format", a.format == b.format);
    note("rotation", a.rotation == b.rotation);
    note("memory", a.memory == b.memory);
    note("performance", a.performance == b.performance);
    note("naming", a.naming == b.naming);
    note("delivery", a.delivery == b.delivery);
    note("shutdown", a.shutdown == b.shutdown);
    note("log", a.log == b.log);
    note("admin", a.admin == b.admin);
    note("iceberg", a.iceberg == b.iceberg);
    return out;
}

}  // namespace iss::config
