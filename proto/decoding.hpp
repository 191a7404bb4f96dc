// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What the decoders of proto/ share: the dotted names they give a field in their errors
/// (`topic.name`, `consumer_group.members[2]`), and ISS_TRY, the step that reads one field.
/// Included by the codecs' .cpp files only.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace iss::proto {

/// `prefix.name`.
[[nodiscard]] inline std::string field_path(std::string_view prefix, std::string_view name) {
    std::string s;
    s.reserve(prefix.size() + 1 + name.size());
    s += prefix;
    s += '.';
    s += name;
    return s;
}

/// `prefix.list[i]`.
[[nodiscard]] inline std::string field_path(std::string_view prefix, std::string_view list, std::size_t i) {
    std::string s = field_path(prefix, list);
    s += '[';
    s += std::to_string(i);
    s += ']';
    return s;
}

}  // namespace iss::proto

/// Reads one field: `dst = *expr` when `expr` (a `result<T>`) holds a value, else returns its
/// error from the enclosing function.
#define ISS_TRY(dst, expr)          \
    do {                            \
        auto _r = (expr);           \
        if (!_r) return _r.error(); \
        dst = std::move(*_r);       \
    } while (0)
