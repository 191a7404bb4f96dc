// SPDX-License-Identifier: Apache-2.0
#include "format/key_template.hpp"

#include <fmt/format.h>

#include <array>
#include <iterator>

namespace iss::format {

namespace {

struct known_placeholder {
    std::string_view name;
    placeholder what;
    bool numeric;
};

constexpr std::array<known_placeholder, 16> known{{
    {"prefix", placeholder::prefix, false},
    {"stream", placeholder::stream, false},
    {"topic", placeholder::topic, false},
    {"partition", placeholder::partition, true},
    {"start_offset", placeholder::start_offset, true},
    {"topic_created", placeholder::topic_created, true},
    {"ext", placeholder::ext, false},
    {"yyyy", placeholder::yyyy, false},
    {"MM", placeholder::MM, false},
    {"dd", placeholder::dd, false},
    {"HH", placeholder::HH, false},
    {"mm", placeholder::mm, false},
    {"date", placeholder::date, false},
    {"hour", placeholder::hour, false},
    {"header", placeholder::header, false},
    {"field", placeholder::field, false},
}};

/// Whether `p` takes an argument after ':' (`{header:NAME}`, `{field:PATH}`) instead of a width.
constexpr bool takes_argument(placeholder p) noexcept { return p == placeholder::header || p == placeholder::field; }

constexpr unsigned max_width = 40;

bool is_unreserved(unsigned char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

/// Why a tempting but unsupported placeholder is refused (empty: just unknown).
std::string_view refusal_reason(std::string_view name) noexcept {
    static constexpr std::array<std::string_view, 8> cut_dependent{"end_offset",   "last_offset", "count", "records",
                                                                   "record_count", "size",        "bytes", "end"};
    static constexpr std::array<std::string_view, 13> time_dependent{
        "time", "datetime", "timestamp", "now", "upload_time", "year", "month",
        "day",  "minute",   "second",    "dt",  "ts",          "epoch"};
    static constexpr std::array<std::string_view, 6> random_parts{"uuid", "random", "rand", "nonce", "guid", "id"};
    static constexpr std::array<std::string_view, 5> host_parts{"host", "hostname", "pid", "instance", "node"};
    for (auto n : cut_dependent)
        if (n == name)
            return "it depends on where the object was cut, and a replay after a crash may cut elsewhere, so it "
                   "would write a second object instead of finding the first (docs/architecture.md §3.2)";
    for (auto n : time_dependent)
        if (n == name)
            return "the upload time differs on a replay, so a replay would write a second copy instead of finding "
                   "the first (docs/architecture.md §3); for the record time of the object's first message use {yyyy} "
                   "{MM} "
                   "{dd} {HH} {mm} {date} {hour}";
    for (auto n : random_parts)
        if (n == name)
            return "a random part differs on a replay, so a replay would write a second copy (docs/architecture.md "
                   "§3.2)";
    for (auto n : host_parts)
        if (n == name)
            return "it differs between daemons, so a group member taking a partition over would write a second copy "
                   "(docs/architecture.md §3.2)";
    return {};
}

}  // namespace

std::string_view to_string(placeholder p) noexcept {
    for (const auto& k : known)
        if (k.what == p) return k.name;
    return "?";
}

void append_name_encoded(std::string& out, std::string_view name) {
    static constexpr char hex[] = "0123456789ABCDEF";
    const bool only_dots = !name.empty() && name.find_first_not_of('.') == std::string_view::npos;
    for (const char ch : name) {
        const auto c = static_cast<unsigned char>(ch);
        if (is_unreserved(c) && !only_dots) {
            out += ch;
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 0xf];
        }
    }
}

namespace {

/// Whether segment `s` renders digits only (a number placeholder).
bool numeric_segment(const key_template::segment& s) noexcept {
    return !s.is_literal && (s.what == placeholder::partition || s.what == placeholder::start_offset ||
                             s.what == placeholder::topic_created);
}

/// `{topic_created}` next to another number (`{topic_created}{start_offset}`): generation 12
/// at offset 3 and generation 1 at offset 23 would render the same key, so a new generation
/// could take an old object's key. A literal with a non-digit must stand between them.
void check_generation_apart(const std::vector<key_template::segment>& segs, std::vector<std::string>& problems) {
    for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
        const auto& a = segs[i];
        const auto& b = segs[i + 1];
        if (!numeric_segment(a) || !numeric_segment(b)) continue;
        if (a.what != placeholder::topic_created && b.what != placeholder::topic_created) continue;
        problems.push_back(
            fmt::format("{{{}}} and {{{}}} run together: put a separator such as '/' or '-' between "
                        "them (numbers of two topic generations could otherwise render the same key)",
                        to_string(a.what), to_string(b.what)));
    }
}

/// The problem with placeholder `name`, which is not a known one.
std::string unknown_placeholder(std::string_view name) {
    if (name.empty()) return "empty placeholder {} (write '{{}}' for literal braces)";
    if (auto why = refusal_reason(name); !why.empty())
        return fmt::format("placeholder {{{}}} is not allowed: {}", name, why);
    return fmt::format(
        "unknown placeholder {{{}}}; the known ones are {{prefix}} {{stream}} {{topic}} {{partition}} "
        "{{start_offset}} {{topic_created}} {{ext}} {{yyyy}} {{MM}} {{dd}} {{HH}} {{mm}} {{date}} {{hour}} "
        "{{header:NAME}} "
        "{{field:PATH}}",
        name);
}

/// The zero-padding width of `{inner}` (`spec`: the text after ':', `0` and 1 to max_width
/// digits); 0 with a problem when it is not one or the placeholder is not `numeric`.
unsigned padding_width(std::string_view inner, std::string_view spec, bool numeric,
                       std::vector<std::string>& problems) {
    unsigned width = 0;
    bool ok = spec.size() >= 2 && spec.front() == '0';
    for (std::size_t j = 1; ok && j < spec.size(); ++j) {
        if (spec[j] < '0' || spec[j] > '9') ok = false;
        else width = width * 10 + static_cast<unsigned>(spec[j] - '0');
        if (width > max_width) ok = false;
    }
    if (!ok || width == 0) {
        problems.push_back(
            fmt::format("{{{}}}: the part after ':' must be 0 and a width from 1 to {} (zero padding, e.g. "
                        "{{start_offset:020}}), not '{}'",
                        inner, max_width, spec));
        return 0;
    }
    if (!numeric) {
        problems.push_back(fmt::format(
            "{{{}}}: zero padding applies to {{partition}}, {{start_offset}} and {{topic_created}} only (time "
            "fields have their "
            "fixed widths)",
            inner));
        return 0;
    }
    return width;
}

}  // namespace

std::vector<std::string> key_template::check(std::string_view text) {
    std::vector<std::string> problems;
    (void)parse_into(text, problems);
    return problems;
}

result<key_template> key_template::parse(std::string_view text) {
    std::vector<std::string> problems;
    key_template t = parse_into(text, problems);
    if (problems.empty()) return t;
    std::string detail;
    for (const auto& p : problems) {
        if (!detail.empty()) detail += "; ";
        detail += p;
    }
    return error{errc::bad_key_template, std::move(detail)};
}

key_template key_template::parse_into(std::string_view text, std::vector<std::string>& problems) {
    key_template t;
    t.text_ = std::string{text};
    std::string literal;
    auto flush_literal = [&] {
        if (literal.empty()) return;
        t.segments_.push_back(segment{true, std::move(literal), placeholder::prefix, 0});
        literal.clear();
    };
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (c == '{') {
            if (i + 1 < text.size() && text[i + 1] == '{') {
                literal += '{';
                i += 2;
                continue;
            }
            // A placeholder closes before the next '{': in "{b/{partition}" the first brace is
            // the unclosed one, not the start of a placeholder named "b/{partition".
            const auto close = text.find('}', i + 1);
            const auto reopen = text.find('{', i + 1);
            if (close == std::string_view::npos || reopen < close) {
                problems.push_back(fmt::format("unclosed `{{` at column {} (write `{{{{` for a literal brace)", i + 1));
                literal += c;
                ++i;
                continue;
            }
            const std::string_view inner = text.substr(i + 1, close - i - 1);
            i = close + 1;
            const auto colon = inner.find(':');
            const std::string_view name = inner.substr(0, colon);
            const std::string_view spec =
                colon == std::string_view::npos ? std::string_view{} : inner.substr(colon + 1);
            const known_placeholder* k = nullptr;
            for (const auto& kp : known)
                if (kp.name == name) k = &kp;
            if (k == nullptr) {
                problems.push_back(unknown_placeholder(name));
                continue;
            }
            unsigned width = 0;
            if (takes_argument(k->what)) {
                if (spec.empty()) {
                    problems.push_back(fmt::format("{{{}}} needs {}: write {{{}:{}}}", inner,
                                                   k->what == placeholder::header ? "a header name" : "a payload path",
                                                   name, k->what == placeholder::header ? "NAME" : "PATH"));
                    continue;
                }
                if (k->what == placeholder::field &&
                    (spec.front() == '.' || spec.back() == '.' || spec.find("..") != std::string_view::npos)) {
                    problems.push_back(
                        fmt::format("{{{}}}: the path must be names or array indexes joined by '.' (e.g. user.country, "
                                    "items.0.sku)",
                                    inner));
                    continue;
                }
                const record_arg arg{k->what == placeholder::header ? record_arg_kind::header : record_arg_kind::field,
                                     std::string{spec}};
                std::size_t index = 0;
                while (index < t.args_.size() && !(t.args_[index] == arg)) ++index;
                if (index == t.args_.size()) t.args_.push_back(arg);
                flush_literal();
                segment seg{false, {}, k->what, 0};
                seg.arg = index;
                t.segments_.push_back(std::move(seg));
                continue;
            }
            if (colon != std::string_view::npos) width = padding_width(inner, spec, k->numeric, problems);
            flush_literal();
            t.segments_.push_back(segment{false, {}, k->what, width});
            continue;
        }
        if (c == '}') {
            if (i + 1 < text.size() && text[i + 1] == '}') {
                literal += '}';
                i += 2;
                continue;
            }
            problems.push_back(fmt::format("'}}' at position {} has no '{{' (write '}}}}' for a literal brace)", i));
            ++i;
            continue;
        }
        const auto uc = static_cast<unsigned char>(c);
        if (uc < 0x20 || uc == 0x7f) {
            problems.push_back(fmt::format("control character 0x{:02x} at position {}", uc, i));
        }
        literal += c;
        ++i;
    }
    flush_literal();
    if (!t.uses(placeholder::partition))
        problems.push_back("must contain {partition}: without it two partitions write the same keys");
    if (!t.uses(placeholder::start_offset))
        problems.push_back("must contain {start_offset}: without it every object of a partition gets the same key");
    check_generation_apart(t.segments_, problems);
    return t;
}

time_unit key_template::finest_time() const noexcept {
    time_unit finest = time_unit::none;
    auto take = [&finest](time_unit u) {
        if (static_cast<int>(u) > static_cast<int>(finest)) finest = u;
    };
    for (const auto& s : segments_) {
        if (s.is_literal) continue;
        switch (s.what) {
            case placeholder::yyyy: take(time_unit::year); break;
            case placeholder::MM: take(time_unit::month); break;
            case placeholder::dd:
            case placeholder::date: take(time_unit::day); break;
            case placeholder::HH:
            case placeholder::hour: take(time_unit::hour); break;
            case placeholder::mm: take(time_unit::minute); break;
            default: break;
        }
    }
    return finest;
}

bool key_template::uses(placeholder p) const noexcept {
    for (const auto& s : segments_)
        if (!s.is_literal && s.what == p) return true;
    return false;
}

std::string key_template::render(const key_values& v) const {
    std::string out;
    out.reserve(128);
    // Slashes from literals and the prefix: no leading '/', no '//'.
    auto append_path = [&out](std::string_view s) {
        for (const char c : s) {
            if (c == '/' && (out.empty() || out.back() == '/')) continue;
            out += c;
        }
    };
    for (const auto& s : segments_) {
        if (s.is_literal) {
            append_path(s.literal);
            continue;
        }
        switch (s.what) {
            case placeholder::prefix: append_path(v.prefix); break;
            case placeholder::stream: append_name_encoded(out, v.stream); break;
            case placeholder::topic: append_name_encoded(out, v.topic); break;
            case placeholder::partition: fmt::format_to(std::back_inserter(out), "{:0{}}", v.partition, s.width); break;
            case placeholder::start_offset:
                fmt::format_to(std::back_inserter(out), "{:0{}}", v.start_offset, s.width);
                break;
            case placeholder::topic_created:
                fmt::format_to(std::back_inserter(out), "{:0{}}", v.topic_created, s.width);
                break;
            case placeholder::ext: append_path(v.ext); break;
            case placeholder::yyyy:
            case placeholder::MM:
            case placeholder::dd:
            case placeholder::HH:
            case placeholder::mm:
            case placeholder::date:
            case placeholder::hour: {
                const std::optional<local_time>* lt = v.record ? &v.record->time : nullptr;
                if (!lt || !lt->has_value()) {
                    append_name_encoded(out, v.record ? v.record->missing : default_missing_value);
                    break;
                }
                const local_time& t = **lt;
                auto it = std::back_inserter(out);
                switch (s.what) {
                    case placeholder::yyyy: fmt::format_to(it, "{:04}", t.year); break;
                    case placeholder::MM: fmt::format_to(it, "{:02}", t.month); break;
                    case placeholder::dd: fmt::format_to(it, "{:02}", t.day); break;
                    case placeholder::HH:
                    case placeholder::hour: fmt::format_to(it, "{:02}", t.hour); break;
                    case placeholder::mm: fmt::format_to(it, "{:02}", t.minute); break;
                    default: fmt::format_to(it, "{:04}-{:02}-{:02}", t.year, t.month, t.day); break;
                }
                break;
            }
            case placeholder::header:
            case placeholder::field: {
                const std::optional<std::string>* a =
                    v.record && s.arg < v.record->args.size() ? &v.record->args[s.arg] : nullptr;
                if (a && a->has_value() && !(*a)->empty()) append_name_encoded(out, **a);
                else append_name_encoded(out, v.record ? v.record->missing : default_missing_value);
                break;
            }
        }
    }
    return out;
}

}  // namespace iss::format
