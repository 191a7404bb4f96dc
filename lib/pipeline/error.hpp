// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The pipeline's error category (docs/architecture.md §8.4.1).

#include "common/error.hpp"

namespace iss::pipeline {

/// What went wrong in the pipeline. Messages say what to check.
enum class errc {
    bad_message = 1,       ///< the format writer refused a message (on_bad_message decides)
    bad_object_metadata,   ///< an existing object's iggy-* metadata is missing or unparseable
    conditional_required,  ///< s3.conditional_writes: required, but the store ignores If-None-Match
    invalid_option,        ///< a pipeline option is outside what the pipeline accepts
    nondeterministic_key,  ///< the key namer renders different keys for the same input
};

const boost::system::error_category& pipeline_category() noexcept;
inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), pipeline_category()}; }

}  // namespace iss::pipeline

template <>
struct boost::system::is_error_code_enum<iss::pipeline::errc> : std::true_type {};
