// SPDX-License-Identifier: Apache-2.0
#include "pipeline/adapters/key_namer.hpp"

#include <date/tz.h>

#include <string>

namespace iss::pipeline {

namespace {
format::record_input input_of(const message& m) {
    return format::record_input{m.timestamp_us, m.origin_timestamp_us, m.payload, m.user_headers};
}
}  // namespace

template_key_namer::template_key_namer(format::key_template t, std::string prefix, std::string ext,
                                       format::time_source source, const date::time_zone* tz, std::string missing)
    : t_{t},
      prefix_{std::move(prefix)},
      ext_{std::move(ext)},
      closes_on_bucket_{source.what == format::time_source::kind::timestamp &&
                        t.finest_time() != format::time_unit::none},
      reader_{t, std::move(source), tz ? tz : date::locate_zone("UTC"), std::move(missing)} {}

result<encoded_partition> template_key_namer::encode(const partition_ref& p, const message& m) const {
    if (!t_.uses_record()) return encoded_partition{};
    encoded_partition e;
    if (auto r = reader_.read(input_of(m), values_, e.bucket); !r) return r.error();
    // The key with {start_offset} at 0: equal exactly for keys that differ only there.
    format::key_values v{prefix_, p.stream, p.topic, p.partition, 0, ext_};
    v.record = &values_;
    v.topic_created = m.topic_created_us;
    e.id = t_.render(v);
    // ... and the time bucket: two real intervals that render alike (the two 02 hours of a
    // fall-back night, or 14:00 of two days under a key without {date}) are two encoded
    // partitions, whatever the time source. With Iggy's append time a later bucket closes the
    // earlier one anyway; with a field or header time the messages of both may interleave,
    // and without this they would share one object. ('\0' never occurs in a rendered key.)
    if (e.bucket) {
        e.id += '\0';
        e.id += std::to_string(*e.bucket);
    }
    return e;
}

object_key template_key_namer::key_for(const partition_ref& p, const message& first) const {
    if (!t_.uses_record()) return key_in(p, first.offset, first.topic_created_us);
    std::optional<std::int64_t> bucket;
    if (auto r = reader_.read(input_of(first), values_, bucket); !r) values_ = format::record_values{};
    format::key_values v{prefix_, p.stream, p.topic, p.partition, first.offset, ext_};
    v.record = &values_;
    v.topic_created = first.topic_created_us;
    return object_key{t_.render(v)};
}

}  // namespace iss::pipeline
