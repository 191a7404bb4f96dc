#pragma once
/// \file
/// The object key template (design.md §3.2, "deterministic keys").
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
/// | `{ext}`          | the extension without its dot: `jsonl`, `json.gz` |
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
///
/// Rendering percent-encodes every byte of a stream or topic name outside `[A-Za-z0-9._-]`
/// (upper-case hex, `%2F` for `/`), so a name never adds a path level; a name made only of
/// dots (`.`, `..`) is encoded whole, since file-system tools treat those as path steps. After
/// rendering, a leading `/` is dropped and runs of `/` collapse to one, so an empty prefix
/// (or one ending in `/`) leaves no leading or doubled `/`.

#include "format/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace iss::format {

/// The placeholders a key template knows.
enum class placeholder : std::uint8_t { prefix, stream, topic, partition, start_offset, ext };

/// The values one key is rendered from.
struct key_values {
    std::string_view prefix;         ///< `s3.prefix`, may be empty, may contain `/`
    std::string_view stream;         ///< stream name (raw bytes; encoded on rendering)
    std::string_view topic;          ///< topic name (raw bytes; encoded on rendering)
    std::uint32_t partition = 0;     ///< partition id
    std::uint64_t start_offset = 0;  ///< offset of the first message in the object
    std::string_view ext;            ///< extension without the leading dot (`jsonl.gz`)
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

    /// The template text as given.
    [[nodiscard]] const std::string& text() const noexcept { return text_; }
    [[nodiscard]] const std::vector<segment>& segments() const noexcept { return segments_; }

private:
    static key_template parse_into(std::string_view text, std::vector<std::string>& problems);

    std::string text_;
    std::vector<segment> segments_;
};

/// The placeholder's name as written in a template, without braces.
[[nodiscard]] std::string_view to_string(placeholder p) noexcept;

}  // namespace iss::format
