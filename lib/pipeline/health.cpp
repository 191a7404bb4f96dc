// SPDX-License-Identifier: Apache-2.0
#include "pipeline/health.hpp"

#include <cerrno>

namespace iss::pipeline {

std::string_view to_string(spool_error_reason r) noexcept {
    switch (r) {
        case spool_error_reason::no_space: return "no_space";
        case spool_error_reason::read_only: return "read_only";
        case spool_error_reason::missing: return "missing";
        case spool_error_reason::io_error: return "io_error";
    }
    return "io_error";
}

spool_error_reason spool_error_reason_of(int errno_value) noexcept {
    switch (errno_value) {
        case ENOSPC:
        case EDQUOT: return spool_error_reason::no_space;
        case EROFS:
        case EACCES:
        case EPERM: return spool_error_reason::read_only;
        case ENOENT:
        case ENOTDIR: return spool_error_reason::missing;
        default: return spool_error_reason::io_error;
    }
}

spool_error_reason spool_error_reason_of(const error& e) noexcept {
    return e.code().category() == boost::system::system_category() ? spool_error_reason_of(e.code().value())
                                                                   : spool_error_reason::io_error;
}

bool delivery_health::store_refused(std::string_view code, std::string_view detail, clock::steady_time now) {
    refusals_[std::string{code}] += 1;
    const bool changed = !refusal_ || refusal_->code != code;
    if (changed) refusal_ = refusal{std::string{code}, {}, now};
    refusal_->detail = std::string{detail};
    return changed;
}

bool delivery_health::store_accepted() noexcept {
    const bool was = refusal_.has_value();
    refusal_.reset();
    return was;
}

bool delivery_health::spool_failed(spool_error_reason r, std::string_view detail, clock::steady_time now) {
    spool_errors_[static_cast<std::size_t>(r)] += 1;
    const bool changed = !spool_ || spool_->reason != r;
    if (changed) spool_ = spool_fault{r, {}, now};
    spool_->detail = std::string{detail};
    return changed;
}

bool delivery_health::spool_ok() noexcept {
    const bool was = spool_.has_value();
    spool_.reset();
    return was;
}

}  // namespace iss::pipeline
