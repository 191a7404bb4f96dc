// SPDX-License-Identifier: Apache-2.0
#include "pipeline/error.hpp"

namespace iss::pipeline {

namespace {
const char* message_of(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::bad_message: return "the format writer refused the message (see delivery.on_bad_message)";
        case errc::bad_object_metadata:
            return "the existing object has no valid x-amz-meta-iggy-first-offset/-last-offset/-count "
                   "(was it written by iggy-s3-sink? check naming.key and s3.prefix)";
        case errc::conditional_required:
            return "s3.conditional_writes is 'required' but the store does not honour If-None-Match "
                   "on PutObject";
        case errc::invalid_option: return "invalid pipeline option";
        case errc::nondeterministic_key:
            return "the object key is not a function of (stream, topic, partition, first offset) "
                   "alone (check naming.key)";
    }
    return nullptr;
}
}  // namespace

const boost::system::error_category& pipeline_category() noexcept {
    static const iss::simple_category c{"pipeline", message_of};
    return c;
}

}  // namespace iss::pipeline
