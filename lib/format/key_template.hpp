// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The object key template (docs/architecture.md §3.2, "deterministic keys").
///
/// A template is literal text with placeholders:
///
/// | placeholder      | value                                             |
/// | ---------------- | ------------------------------------------------- |
/// | `{prefix}`       | `s3.prefix`, inserted as is (it may hold `/`)       |
/// | `{stream}`       | the stream name, percent-encoded                  |
/// | `{topic}`        | the topic name, percent-encoded                   |
/// | `{partition}`    | the partition id (decimal)                        |
/// | `{start_offset}` | the offset of the object's first message          |
/// | `{topic_created}`| the topic's creation time (GetTopic `created_at`, µs since the Unix epoch): its generation, new when the topic is deleted and created again |
/// | `{ext}`          | the extension without its dot: `jsonl`, `json.gz` |
/// | `{yyyy}` `{MM}` `{dd}` `{HH}` `{mm}` | record time of the object's first message, in `naming.timezone` |
/// | `{date}` `{hour}`| `{yyyy}-{MM}-{dd}` and `{HH}` (as Iggy's own S3 sink) |
/// | `{header:NAME}`  | user header NAME of the first message (string as text, numbers in decimal, bool `true`/`false`, other kinds hex) |
/// | `{field:PATH}`   | the JSON payload's value at dotted PATH (`user.country`, `items.0.sku`): a string as text, a number or bool as written |
///
/// The record placeholders (time, header, field) are rendered from data the message carries, so
/// a replay renders the same key. Their values are percent-encoded like stream names (a value
/// never adds a path level); a message without the header or field, or without a readable time,
/// renders `record_values::missing` (`naming.missing_value`, default `__HIVE_DEFAULT_PARTITION__`).
/// Messages whose keys differ in anything but `{start_offset}` belong to different "encoded
/// partitions" and go to different objects (pipeline/delivery.hpp).
///
/// Numbers may be zero-padded to a width: `{start_offset:020}` (20 digits hold any u64, so
/// keys then sort by offset). `{{` and `}}` are a literal brace.
///
/// Rules checked by `key_template::parse` (and listed all at once by `check`):
/// - `{partition}` and `{start_offset}` are required: without them two objects of one
///   partition, or of two partitions, would get the same key.
/// - nothing a replay could render differently: there is no `{end_offset}`, no upload time,
///   no random part, no host name. A replay after a crash must produce the same key so that
///   `If-None-Match: *` finds the earlier object instead of writing a second copy.
/// - unknown placeholders are rejected, with the reason for the known "tempting" ones.
/// - `{topic_created}` must be set off from `{partition}` and `{start_offset}` by a literal
///   that is not a digit: two generations' numbers run together could render alike.
///
/// Rendering percent-encodes every byte of a stream or topic name outside `[A-Za-z0-9._-]`
/// (upper-case hex, `%2F` for `/`), so a name never adds a path level; a name made only of
/// dots (`.`, `..`) is encoded whole, since file-system tools treat those as path steps. After
/// rendering, a leading `/` is dropped and runs of `/` collapse to one, so an empty prefix
/// (or one ending in `/`) leaves no leading or doubled `/`.

#include "format/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iss::format {

/// The placeholders a key template knows.
enum class placeholder : std::uint8_t {
    prefix,
    stream,
    topic,
    partition,
    start_offset,
    topic_created,  ///< the topic's creation time, µs (its generation)
    ext,
    yyyy,
    MM,
    dd,
    HH,
    mm,
    date,
    hour,  ///< record time (local, `naming.timezone`)
    header,
    field,  ///< `{header:NAME}`, `{field:PATH}` (the argument in segment::arg)
};

/// `naming.missing_value`'s default: the Hive/Spark/Athena name of a partition without a value.
inline constexpr std::string_view default_missing_value = "__HIVE_DEFAULT_PARTITION__";

/// A local calendar time (the record time in `naming.timezone`), for the time placeholders.
struct local_time {
    int year = 1970;
    unsigned month = 1;   ///< 1..12
    unsigned day = 1;     ///< 1..31
    unsigned hour = 0;    ///< 0..23
    unsigned minute = 0;  ///< 0..59
    friend bool operator==(const local_time&, const local_time&) = default;
};

/// The finest time field a template uses (the size of its time buckets).
enum class time_unit : std::uint8_t { none, year, month, day, hour, minute };

/// What a record argument refers to.
enum class record_arg_kind : std::uint8_t { header, field };

/// One distinct `{header:NAME}` or `{field:PATH}` of a template (`key_template::record_args`).
struct record_arg {
    record_arg_kind kind = record_arg_kind::header;
    std::string name;  ///< NAME or dotted PATH
    friend bool operator==(const record_arg&, const record_arg&) = default;
};

/// The values of the record placeholders for one message.
struct record_values {
    std::optional<local_time> time;                ///< nullopt: time placeholders render `missing`
    std::vector<std::optional<std::string>> args;  ///< raw values, one per record_args() entry; nullopt: missing
    std::string_view missing = default_missing_value;
};

/// The values one key is rendered from.
struct key_values {
    std::string_view prefix;         ///< `s3.prefix`, may be empty, may contain `/`
    std::string_view stream;         ///< stream name (raw bytes; encoded on rendering)
    std::string_view topic;          ///< topic name (raw bytes; encoded on rendering)
    std::uint32_t partition = 0;     ///< partition id
    std::uint64_t start_offset = 0;  ///< offset of the first message in the object
    std::string_view ext;            ///< extension without the leading dot (`jsonl.gz`)
    /// The record placeholders' values; null: every record placeholder renders
    /// `default_missing_value`.
    const record_values* record = nullptr;
    std::uint64_t topic_created = 0;  ///< the topic's `created_at` (µs), for `{topic_created}`
};

/// Appends `name` to `out` with every byte outside `[A-Za-z0-9._-]` as `%XX` (upper-case);
/// a name made only of dots is encoded entirely (`..` -> `%2E%2E`).
void append_name_encoded(std::string& out, std::string_view name);

/// A parsed, checked key template. Cheap to copy; `render` does not allocate beyond the key.
class key_template {
public:
    /// One piece of a template: literal text, or a placeholder with a zero-pad width (0: none).
    struct segment {
        bool is_literal = true;
        std::string literal;
        placeholder what = placeholder::prefix;
        unsigned width = 0;
        std::size_t arg = 0;  ///< header/field: index into record_args()
    };

    /// Parses and checks `text`. On failure the error (errc::bad_key_template) carries every
    /// problem, joined by "; ", as its detail.
    [[nodiscard]] static result<key_template> parse(std::string_view text);

    /// Every problem with `text`, each a sentence saying what is wrong and why; empty when the
    /// template is valid. Config validation shows these one per line.
    [[nodiscard]] static std::vector<std::string> check(std::string_view text);

    /// The key for `v`.
    [[nodiscard]] std::string render(const key_values& v) const;

    /// Whether the template contains `p`.
    [[nodiscard]] bool uses(placeholder p) const noexcept;

    /// The distinct `{header:NAME}` / `{field:PATH}` of the template, in order of first use
    /// (record_values::args follows this order).
    [[nodiscard]] const std::vector<record_arg>& record_args() const noexcept { return args_; }
    /// The finest time field used (`{mm}` minute, `{HH}`/`{hour}` hour, `{dd}`/`{date}` day, ...).
    [[nodiscard]] time_unit finest_time() const noexcept;
    /// Whether any record placeholder (time, header, field) is used: keys then depend on the
    /// message, and one partition may have several encoded partitions.
    [[nodiscard]] bool uses_record() const noexcept { return finest_time() != time_unit::none || !args_.empty(); }

    /// The template text as given.
    [[nodiscard]] const std::string& text() const noexcept { return text_; }
    [[nodiscard]] const std::vector<segment>& segments() const noexcept { return segments_; }

private:
    static key_template parse_into(std::string_view text, std::vector<std::string>& problems);

    std::string text_;
    std::vector<segment> segments_;
    std::vector<record_arg> args_;
};

/// The placeholder's name as written in a template, without braces.
[[nodiscard]] std::string_view to_string(placeholder p) noexcept;

}  // namespace iss::format
