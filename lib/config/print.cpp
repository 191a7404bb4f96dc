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

    template <class F>
    void optional_section(std::string_view key, std::string_view help, bool present, F&& fn) {
        if (present) section(key, help, std::forward<F>(fn));
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
        line(fmt::format("{}: {}", key, bare_or_quoted(detail::choice_name(value, choices))));
    }

    void strings(std::string_view key, const std::vector<std::string>& v, std::string_view, std::string_view = {}) {
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

    void env_default(std::string_view, std::string_view = {}) {}
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

    std::vector<section_doc> sections;

    template <class F>
    void section(std::string_view key, std::string_view help, F&& fn) {
        if (path_.empty()) sections.push_back(section_doc{std::string{key}, std::string{help}});
        const auto saved = path_;
        path_ = join(key);
        fn();
        path_ = saved;
    }

    template <class F>
    void optional_section(std::string_view key, std::string_view help, bool, F&& fn) {
        section(key, help, std::forward<F>(fn));
    }

    template <class T, class F>
    void list(std::string_view key, const std::vector<T>&, std::string_view help, F&& fn) {
        if (path_.empty()) sections.push_back(section_doc{std::string{key}, std::string{help}});
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
        add(key, detail::choice_names(choices, " | "), std::string{detail::choice_name(value, choices)}, help);
    }

    void strings(std::string_view key, const std::vector<std::string>&, std::string_view help,
                 std::string_view default_text = "(required)") {
        add(key, "string or list of strings", std::string{default_text}, help);
    }

    void partitions(std::string_view key, bool, const std::vector<std::uint32_t>&, std::string_view help) {
        add(key, "all or list of integers", "all", help);
    }

    void pairs(std::string_view key, const std::map<std::string, std::string, std::less<>>&, std::string_view help) {
        add(key, "mapping of strings", "{}", help);
    }

    void env_default(std::string_view var, std::string_view unless = {}) {
        env_ = unless.empty() ? std::string{var} : fmt::format("{} (without {})", var, unless);
    }
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
    std::string env_;
};

/// The rows and sections of the schema, defaults from a default-constructed config.
describer describe_defaults() {
    describer d;
    const sink_config defaults{};
    detail::visit_schema(d, defaults);
    return d;
}

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

std::vector<key_doc> describe() { return describe_defaults().rows; }

std::string describe_markdown() {
    std::string out = "| key | type | default | meaning |\n| --- | --- | --- | --- |\n";
    for (const auto& r : describe()) {
        out += fmt::format("| `{}` | {} | `{}` | {} |\n", r.path, md_escape(r.type), md_escape(r.default_text),
                           md_escape(r.help));
    }
    return out;
}

namespace {

/// `docs/NAME.md` in a help text becomes a link relative to docs/ (the page lives there).
std::string link_pages(std::string_view s) {
    constexpr std::string_view dir = "docs/";
    std::string out;
    std::size_t i = 0;
    while (true) {
        const auto at = s.find(dir, i);
        if (at == std::string_view::npos) {
            out += s.substr(i);
            return out;
        }
        const auto end = s.find(".md", at);
        const auto name =
            end == std::string_view::npos ? std::string_view{} : s.substr(at + dir.size(), end + 3 - at - dir.size());
        if (name.size() <= 3 || name.find_first_of(" /`") != std::string_view::npos) {
            out += s.substr(i, at + dir.size() - i);
            i = at + dir.size();
            continue;
        }
        out += s.substr(i, at - i);
        out += fmt::format("[{}]({})", name, name);
        i = end + 3;
    }
}

/// The top-level part of a key path: `s3` of `s3.retry.deadline`, `sources` of `sources[].stream`.
std::string_view top_of(std::string_view path) { return path.substr(0, path.find_first_of(".[")); }

/// Words of `text` on lines of at most `width` columns, each indented by `indent`.
std::string wrap(std::string_view text, std::size_t indent, std::size_t width) {
    std::string out;
    std::size_t col = 0;
    while (!text.empty()) {
        const auto sp = text.find(' ');
        const auto word = text.substr(0, sp);
        text = sp == std::string_view::npos ? std::string_view{} : text.substr(sp + 1);
        if (word.empty()) continue;
        if (col > 0 && col + 1 + word.size() > width) {
            out += '\n';
            col = 0;
        }
        if (col == 0) {
            out.append(indent, ' ');
            col = indent;
        } else {
            out += ' ';
            ++col;
        }
        out += word;
        col += word.size();
    }
    out += '\n';
    return out;
}

constexpr std::string_view page_head = R"md(# Configuration reference

<!-- Generated by `iggy-s3-sink check-config --help-config --markdown > docs/configuration.md`
from the schema (lib/config/schema.hpp, lib/config/print.cpp): edit those, not this file. The
test docs.configuration fails when this file differs from what the command prints. -->

Every key of the one YAML file iggy-s3-sink reads, with its type, default and meaning, and
every rule the file is checked against. An example to start from:
[packaging/iggy-s3-sink.yaml](../packaging/iggy-s3-sink.yaml). Check a file, without
connecting anywhere, with

```
iggy-s3-sink check-config --config /etc/iggy-s3-sink/iggy-s3-sink.yaml
```

which prints the effective configuration (every key, defaults filled in, secrets as `****`) and
exits 0, or lists **every** problem with its YAML path, rule and line and exits 78:

```
iggy-s3-sink check-config: sink.yaml: invalid configuration, 2 problems:
  s3.part_sise: unknown key (did you mean part_size?) (line 12)
  s3.retry.deadline: must be <= 25s in group mode (the server forces a partition hand-over after 30s; the rest is left to finish and commit), not 40s (line 19)
```

`iggy-s3-sink check-config --help-config` prints the keys below for a terminal.

)md";

constexpr std::string_view page_rules = R"md(## Rules of the file

`check-config`, `probe --config` and `run` share this one validation, which holds every check
`run` makes on the configuration (an endpoint port outside 1..65535, a 2-character bucket on a
custom endpoint): each of them exits 78 listing every problem, before any connection.

- **Unknown keys and duplicate keys are errors** (a misspelt key is never silently ignored;
  YAML itself would keep only one of two equal keys).
- **Environment variables**: `${VAR}` and `${VAR:-default}` are replaced in every value
  (`:-` also applies when VAR is set but empty). An unset `${VAR}` without a default is an
  error that names VAR. `$${` is a literal `${`. The replaced text is taken as it is, never
  parsed as YAML again, so secrets may contain `:` or `#`. Inside a flow map or list
  (`log: {level: ${LOG_LEVEL}}`) braces are YAML syntax: quote the value
  (`{level: "${LOG_LEVEL}"}`); the error for an unquoted one says so.
- **Sizes**: `8MiB`, `512KiB`, `1.5GiB` (powers of 1024), `8MB`, `8KB` (powers of 1000), or a
  plain number of bytes. `8M` is refused as ambiguous.
- **Durations**: `250ms`, `10s`, `10m`, `1h`, `1d`, or sums like `1h30m`. A bare number other
  than `0` is refused (`grace: 30`: seconds or milliseconds?).
- **Booleans**: `true`/`false` (also `yes`/`no`, `on`/`off`). Choices such as
  `conditional_writes: off` or `path_style: no` are read as the words they are, never as
  YAML 1.1 booleans; names such as `stream: 007` or `topic: on` stay strings.
- **Secrets** (`iggy.password`, `iggy.token`, `s3.secret_access_key`, `s3.session_token`)
  print as `****` in every output and log line. An absent `iggy.password` is taken from
  `IGGY_PASSWORD`. An absent `s3.access_key_id` is taken, together with the secret and the
  session token, from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`;
  with an access key id written in the file, nothing of the environment's identity is mixed
  in (write `secret_access_key: ${MY_SECRET}` to take just the secret from a variable).
- **Modes**: `iggy.consumer_group: NAME` (default `s3-sink`) joins a consumer group, and the
  server assigns partitions to the members; `iggy.consumer: NAME` instead reads every
  configured partition as one consumer (the only mode where `sources[].partitions` may list
  ids). Never both.

)md";

constexpr std::string_view page_checks = R"md(## Checks across keys

Checks beyond a key's own type, all reported together:


Checks beyond a key's own type, all reported together:

- `iggy`: a password or a token (not both); `address` is `host:port` (`[v6]:port`), no scheme;
  `tls.ca_file`/`tls.server_name` only with `tls.enabled`; names 1..255 bytes of UTF-8.
- `sources`: at least one; no stream/topic twice; partition lists only with `consumer:`, no
  empty list, no id twice.
- `s3`: `bucket` required (AWS naming rules when `endpoint` is empty, 3..63 characters with
  one); `endpoint` is `http(s)://host[:port]` without a path or user info, port 1..65535;
  `region: auto` needs an `endpoint`; `path_style: false` cannot work with an IP-address
  endpoint, nor over https with a dotted bucket name (no wildcard certificate matches it);
  `payload_signing: unsigned`, `tls.ca_file` and `tls.insecure` need https;
  `part_size` 5MiB..5GiB; `retry.cap >= retry.base`; `timeouts.* <= retry.deadline`.
- **Group hand-over**: in group mode `s3.retry.deadline` must be > 0 and at most 25s. An Iggy
  0.8 server forces a pending partition hand-over after 30 s without telling the old owner,
  so every S3 operation must give up early enough to drop the partition cleanly
  ([architecture.md](architecture.md) §3.5).
- `format`: `separator` only for `raw`; `payload` only for the JSON types;
  `compression_level` within the codec's range, and only with a compression; `compression`
  refused for `parquet` and `avro`; `schema` only for `csv`, `parquet`, `avro`, each column's
  `type` and `from` known and compatible, names unique (and Avro names for `avro`);
  `csv.delimiter` one character (not a quote, CR, LF); `parquet.row_group_size` 64KiB..1GiB.
- `rotation`: `max_records`, `max_bytes` > 0; `max_bytes` at most 10000 parts of `part_size`
  (S3's limit); `schedule` divides a day (or is whole days); `idle` and `schedule` not both 0
  (a quiet partition would never upload or commit); `timezone` a known IANA name.
- `naming.key`: the rules of [formats-and-layout.md](formats-and-layout.md#object-keys); also, with several streams (topics) in `sources`, the key must
  contain `{stream}` (`{topic}`), and when `s3.prefix` is set it must contain `{prefix}`; the
  longest possible key must fit S3's 1024 bytes.
- `delivery`: with `on_bad_message: dead_letter`, `dead_letter.stream` and `.topic` are
  required, and the dead-letter topic may never be one of the sources (a bad message would
  come back forever).
)md";

}  // namespace

std::vector<section_doc> describe_sections() { return describe_defaults().sections; }

std::string describe_text() {
    std::string out;
    for (const auto& r : describe()) {
        out += fmt::format("{}  {}, default {}\n", r.path, r.type, r.default_text);
        out += wrap(r.help, 4, 100);
    }
    return out;
}

std::string describe_page() {
    const auto rows = describe();
    const auto sections = describe_sections();
    std::string out{page_head};
    out += std::string{page_rules};
    out += "## Keys\n\n";
    for (const auto& s : sections)
        out += fmt::format("- [`{}`](#{}): {}\n", s.name, s.name, link_pages(md_escape(s.help)));
    out += '\n';
    for (const auto& s : sections) {
        out += fmt::format("### {}\n\n{}\n\n| key | type | default | meaning |\n| --- | --- | --- | --- |\n", s.name,
                           link_pages(s.help));
        for (const auto& r : rows) {
            if (top_of(r.path) != s.name) continue;
            out += fmt::format("| `{}` | {} | `{}` | {} |\n", r.path, md_escape(r.type), md_escape(r.default_text),
                               link_pages(md_escape(r.help)));
        }
        out += '\n';
    }
    out += std::string{page_checks};
    return out;
}

}  // namespace iss::config
