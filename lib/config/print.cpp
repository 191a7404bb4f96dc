// SPDX-License-Identifier: Apache-2.0
// sink_config -> YAML (secrets as ****), and the key documentation table.
#include "config/config.hpp"
#include "config/schema.hpp"

#include <fmt/format.h>

#include <type_traits>

namespace iss::config {

namespace {

/// A YAML double-quoted scalar that reads back as `s` (and `${` stays literal: `$${`).
std::string quote(std::string_view s) {
    std::string body;
    log::append_json_escaped(body, s);
    std::string out = "\"";
    for (std::size_t i = 0; i < body.size(); ++i) {
        if (body.compare(i, 2, "${") == 0) out += '$';
        out += body[i];
    }
    out += '"';
    return out;
}

template <class T>
std::string value_text(const T& v) {
    using U = std::remove_cvref_t<T>;
    if constexpr (std::is_same_v<U, std::string>) return quote(v);
    else if constexpr (detail::is_secret<U>::value) return quote(v.printable());
    else if constexpr (detail::is_named<U>::value) return quote(v.get());
    else if constexpr (std::is_same_v<U, bool>) return v ? "true" : "false";
    else if constexpr (std::is_same_v<U, milliseconds>) return format_duration(v);
    else if constexpr (std::is_unsigned_v<U>) return fmt::format("{}", v);
    else static_assert(std::is_same_v<U, void>, "no printer for this field type");
}

template <class T>
std::string_view type_name() {
    using U = std::remove_cvref_t<T>;
    if constexpr (std::is_same_v<U, std::string> || detail::is_named<U>::value) return "string";
    else if constexpr (detail::is_secret<U>::value) return "string, secret";
    else if constexpr (std::is_same_v<U, bool>) return "bool";
    else if constexpr (std::is_same_v<U, milliseconds>) return "duration";
    else return "integer";
}

template <class E>
std::string_view choice_name(E v, std::span<const detail::choice<E>> choices) {
    for (const auto& c : choices)
        if (c.value == v) return c.name;
    return "?";
}

std::string bare_or_quoted(std::string_view s) {
    if (!s.empty() && s.front() >= '0' && s.front() <= '9') return quote(s);
    return std::string{s};
}

/// Writes the config as block YAML.
class printer {
public:
    std::string out;

    template <class F>
    void section(std::string_view key, std::string_view, F&& fn) {
        line(fmt::format("{}:", key));
        indent_ += 2;
        fn();
        indent_ -= 2;
    }

    template <class T, class F>
    void list(std::string_view key, const std::vector<T>& items, std::string_view, F&& fn) {
        if (items.empty()) {
            line(fmt::format("{}: []", key));
            return;
        }
        line(fmt::format("{}:", key));
        indent_ += 4;
        for (const auto& item : items) {
            dash_ = true;
            fn(item);
        }
        indent_ -= 4;
    }

    template <class T>
    void field(std::string_view key, const T& value, std::string_view) {
        if (skip()) return;
        line(fmt::format("{}: {}", key, value_text(value)));
    }

    void size(std::string_view key, std::uint64_t value, std::string_view) {
        line(fmt::format("{}: {}", key, format_size(value)));
    }

    template <class E>
    void choice(std::string_view key, E value, std::span<const detail::choice<E>> choices, std::string_view) {
        line(fmt::format("{}: {}", key, bare_or_quoted(choice_name(value, choices))));
    }

    void strings(std::string_view key, const std::vector<std::string>& v, std::string_view) {
        std::string items;
        for (const auto& s : v) items += (items.empty() ? "" : ", ") + quote(s);
        line(fmt::format("{}: [{}]", key, items));
    }

    void partitions(std::string_view key, bool all, const std::vector<std::uint32_t>& ids, std::string_view) {
        line(fmt::format("{}: {}", key, all ? std::string{"all"} : fmt::format("[{}]", fmt::join(ids, ", "))));
    }

    void pairs(std::string_view key, const std::map<std::string, std::string, std::less<>>& m, std::string_view) {
        std::string items;
        for (const auto& [k, v] : m) items += (items.empty() ? "" : ", ") + quote(k) + ": " + quote(v);
        line(fmt::format("{}: {{{}}}", key, items));
    }

    void env_default(std::string_view) {}
    void hide_next(bool h) { hide_ = h; }

private:
    bool skip() {
        const bool h = hide_;
        hide_ = false;
        return h;
    }
    void line(const std::string& text) {
        if (dash_) {
            out.append(static_cast<std::size_t>(indent_ - 2), ' ');
            out += "- ";
            dash_ = false;
        } else {
            out.append(static_cast<std::size_t>(indent_), ' ');
        }
        out += text;
        out += '\n';
    }

    int indent_ = 0;
    bool dash_ = false;
    bool hide_ = false;
};

/// Collects one row per key, defaults taken from a default-constructed config.
class describer {
public:
    std::vector<key_doc> rows;

    template <class F>
    void section(std::string_view key, std::string_view, F&& fn) {
        const auto saved = path_;
        path_ = join(key);
        fn();
        path_ = saved;
    }

    template <class T, class F>
    void list(std::string_view key, const std::vector<T>&, std::string_view help, F&& fn) {
        rows.push_back(key_doc{join(key), "list", "(required)", std::string{help}});
        const auto saved = path_;
        path_ = join(key) + "[]";
        const T item{};
        fn(item);
        path_ = saved;
    }

    template <class T>
    void field(std::string_view key, const T& value, std::string_view help) {
        add(key, std::string{type_name<T>()}, value_text(value), help);
    }

    void size(std::string_view key, std::uint64_t value, std::string_view help) {
        add(key, "size", format_size(value), help);
    }

    template <class E>
    void choice(std::string_view key, E value, std::span<const detail::choice<E>> choices, std::string_view help) {
        add(key, detail::choice_names(choices, " | "), std::string{choice_name(value, choices)}, help);
    }

    void strings(std::string_view key, const std::vector<std::string>&, std::string_view help) {
        add(key, "string or list of strings", "(required)", help);
    }

    void partitions(std::string_view key, bool, const std::vector<std::uint32_t>&, std::string_view help) {
        add(key, "all or list of integers", "all", help);
    }

    void pairs(std::string_view key, const std::map<std::string, std::string, std::less<>>&, std::string_view help) {
        add(key, "mapping of strings", "{}", help);
    }

    void env_default(std::string_view var) { env_ = var; }
    void hide_next(bool) {}

private:
    std::string join(std::string_view key) const {
        return path_.empty() ? std::string{key} : path_ + "." + std::string{key};
    }
    void add(std::string_view key, std::string type, std::string def, std::string_view help) {
        if (!env_.empty()) def = fmt::format("env {}", env_);
        env_ = {};
        rows.push_back(key_doc{join(key), std::move(type), std::move(def), std::string{help}});
    }

    std::string path_;
    std::string_view env_;
};

std::string md_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += "\\|";
        else out += c;
    }
    return out;
}

}  // namespace

std::string to_yaml(const sink_config& c) {
    printer p;
    detail::visit_schema(p, c);
    return std::move(p.out);
}

std::vector<key_doc> describe() {
    describer d;
    const sink_config defaults{};
    detail::visit_schema(d, defaults);
    return std::move(d.rows);
}

std::string describe_markdown() {
    std::string out = "| key | type | default | meaning |\n| --- | --- | --- | --- |\n";
    for (const auto& r : describe()) {
        out += fmt::format("| `{}` | {} | `{}` | {} |\n", r.path, md_escape(r.type), md_escape(r.default_text),
                           md_escape(r.help));
    }
    return out;
}

}  // namespace iss::config
