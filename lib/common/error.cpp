// SPDX-License-Identifier: Apache-2.0
#include "common/error.hpp"

#include <boost/throw_exception.hpp>

namespace iss {

std::string error::message() const {
    std::string m = code_ ? code_.message() : std::string{"success"};
    if (detail_.empty()) return m;
    // A detail built from another error's message already ends with this one: said once.
    if (detail_.ends_with(m)) return detail_;
    return detail_ + ": " + m;
}

void throw_exception_from_error(const error& e, const boost::source_location& loc) {
    boost::throw_exception(error_exception{e}, loc);
}

std::string simple_category::message(int ev) const {
    const char* m = fn_(ev);
    return m != nullptr ? std::string{m} : std::string{name_} + " error " + std::to_string(ev);
}

namespace {
const char* common_message(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::invalid_argument: return "invalid argument";
        case errc::parse_error: return "could not be parsed";
        case errc::limit_exceeded: return "over its limit";
        case errc::timeout: return "deadline passed";
        case errc::io_error: return "input/output error";
    }
    return nullptr;
}
}  // namespace

const boost::system::error_category& common_category() noexcept {
    static const simple_category cat{"common", common_message};
    return cat;
}

}  // namespace iss
