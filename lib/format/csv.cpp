// SPDX-License-Identifier: Apache-2.0
// CSV writer (RFC 4180): a header row with the column names, then one line per record, each
// ending in CRLF. A field is quoted ("...", with " doubled) when it holds the delimiter, a
// quote, CR or LF, or when it could be read as a null: the empty string while `null_text` is
// empty, or a string equal to `null_text`. A null is `null_text`, unquoted.
//
// Values: integers in decimal; float/double in shortest round-trip form (NaN, Infinity,
// -Infinity); booleans `true`/`false`; timestamps RFC 3339 UTC (`2026-11-30T01:02:03.000Z`,
// 3 digits for timestamp_ms, 6 for timestamp_us); dates `YYYY-MM-DD`; binary as base64;
// json as its minified text; the headers map as a JSON object of strings.

#include "common/base64.hpp"
#include "common/rfc3339.hpp"
#include "format/json.hpp"
#include "format/table.hpp"

#include <fmt/format.h>

#include <iterator>

namespace iss::format {

namespace {

class csv_writer final : public table_writer {
public:
    csv_writer(std::vector<column> cols, csv_options o) : cols_{std::move(cols)}, o_{std::move(o)} {}

    void begin(std::string& out) override {
        for (std::size_t i = 0; i < cols_.size(); ++i) {
            if (i > 0) out += o_.delimiter;
            field(out, cols_[i].name);
        }
        out += "\r\n";
    }

    void append(std::span<const cell> row, std::string& out) override {
        for (std::size_t i = 0; i < cols_.size(); ++i) {
            if (i > 0) out += o_.delimiter;
            const cell& v = row[i];
            const column_type t = cols_[i].type;
            switch (v.k) {
                case cell::kind::null: out += o_.null_text; break;
                case cell::kind::integer:
                    if (t == column_type::timestamp_ms || t == column_type::timestamp_us)
                        append_timestamp(out, v.i, t == column_type::timestamp_ms);
                    else if (t == column_type::date) iss::append_rfc3339_date(out, v.i);
                    else fmt::format_to(std::back_inserter(out), "{}", v.i);
                    break;
                case cell::kind::real: {
                    tmp_.clear();
                    if (t == column_type::float32) json::append_number(tmp_, static_cast<float>(v.d));
                    else json::append_number(tmp_, v.d);
                    const std::string_view num = tmp_;
                    out += !num.empty() && num.front() == '"' ? num.substr(1, num.size() - 2) : num;
                    break;
                }
                case cell::kind::boolean: out += v.i != 0 ? "true" : "false"; break;
                case cell::kind::bytes:
                    if (t == column_type::binary) {
                        tmp_.clear();
                        iss::append_base64(tmp_, std::as_bytes(std::span{v.s.data(), v.s.size()}));
                        field(out, tmp_);
                    } else {
                        field(out, v.s);
                    }
                    break;
                case cell::kind::map: {
                    tmp_.clear();
                    tmp_ += '{';
                    bool first = true;
                    for (const auto& [k, val] : v.entries) {
                        if (!first) tmp_ += ',';
                        first = false;
                        json::append_string(tmp_, k);
                        tmp_ += ':';
                        json::append_string(tmp_, val);
                    }
                    tmp_ += '}';
                    field(out, tmp_);
                    break;
                }
            }
        }
        out += "\r\n";
    }

    void finish(std::string& /*out*/) override {}
    [[nodiscard]] std::uint64_t buffered_bytes() const noexcept override { return 0; }

private:
    void field(std::string& out, std::string_view s) const {
        bool quote = (s.empty() && o_.null_text.empty()) || (!o_.null_text.empty() && s == o_.null_text);
        if (!quote)
            for (char ch : s)
                if (ch == o_.delimiter || ch == '"' || ch == '\r' || ch == '\n') {
                    quote = true;
                    break;
                }
        if (!quote) {
            out += s;
            return;
        }
        out += '"';
        for (char ch : s) {
            if (ch == '"') out += '"';
            out += ch;
        }
        out += '"';
    }

    std::vector<column> cols_;
    csv_options o_;
    std::string tmp_;
};

}  // namespace

std::unique_ptr<table_writer> make_csv_writer(std::vector<column> cols, csv_options o) {
    return std::make_unique<csv_writer>(std::move(cols), std::move(o));
}

}  // namespace iss::format
