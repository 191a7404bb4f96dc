// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The error model (docs/architecture.md §8.4): every module has its own `enum class errc`, an error
/// category whose messages say what is wrong and what to check, and `make_error_code`.
/// Pure code returns `iss::result<T>` and never throws on bad input.
///
/// `iss::error` is an `error_code` plus a free-text detail (the field, key or value the error
/// is about), so that "truncated" can say *which* field was truncated without one enum value
/// per field. The detail never holds a secret.

#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <fmt/format.h>

#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

namespace iss {

using boost::system::error_code;

/// A Boost.System error code enum (`is_error_code_enum`), such as a module's `errc`.
template <class E>
concept error_code_enum = boost::system::is_error_code_enum<E>::value;

/// An error: the code (module category + value) and what it is about.
class error {
public:
    error() = default;
    error(error_code code, std::string detail = {}) : code_{code}, detail_{std::move(detail)} {}
    template <error_code_enum E>
    error(E e, std::string detail = {}) : code_{make_error_code(e)}, detail_{std::move(detail)} {}

    [[nodiscard]] const error_code& code() const noexcept { return code_; }
    [[nodiscard]] const std::string& detail() const noexcept { return detail_; }
    /// "detail: category message" or the category message alone.
    [[nodiscard]] std::string message() const;

    friend bool operator==(const error& a, const error_code& b) noexcept { return a.code_ == b; }
    template <error_code_enum E>
    friend bool operator==(const error& a, E b) noexcept {
        return a.code_ == make_error_code(b);
    }

private:
    error_code code_;
    std::string detail_;
};

/// Thrown by `result<T>::value()` on an error (a bug or a startup failure, docs/architecture.md §8.4.8).
class error_exception : public std::runtime_error {
public:
    explicit error_exception(const error& e) : std::runtime_error{e.message()}, error_{e} {}
    [[nodiscard]] const error& get() const noexcept { return error_; }

private:
    error error_;
};

/// Found by ADL from boost::system::result when `.value()` is called on an error.
[[noreturn]] void throw_exception_from_error(const error& e, const boost::source_location& loc);

template <class T>
using result = boost::system::result<T, error>;

/// Errors that belong to no module in particular.
enum class errc {
    invalid_argument = 1,  ///< a value is outside what the function accepts
    parse_error,           ///< text could not be parsed (the detail names the text's role)
    limit_exceeded,        ///< a length or count is over its limit
    timeout,               ///< a deadline passed
    io_error,              ///< a file or socket operation failed
};

const boost::system::error_category& common_category() noexcept;
inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), common_category()}; }

/// Helper for a module's category: name plus a message function, so each module writes only
/// its table of messages.
class simple_category : public boost::system::error_category {
public:
    using message_fn = const char* (*)(int) noexcept;
    constexpr simple_category(const char* name, message_fn fn) noexcept : name_{name}, fn_{fn} {}
    const char* name() const noexcept override { return name_; }
    std::string message(int ev) const override;

private:
    const char* name_;
    message_fn fn_;
};

}  // namespace iss

namespace boost::system {
template <>
struct is_error_code_enum<iss::errc> : std::true_type {};
}  // namespace boost::system

template <>
struct fmt::formatter<iss::error> : fmt::formatter<std::string_view> {
    auto format(const iss::error& e, fmt::format_context& ctx) const {
        return fmt::formatter<std::string_view>::format(e.message(), ctx);
    }
};
