// SPDX-License-Identifier: Apache-2.0
// The `iceberg` section's rules (lib/config/validate.cpp calls check_iceberg). The partition
// transforms and the column types are checked by lib/iceberg, which defines them.
#include "config/schema.hpp"
#include "config/validate_internal.hpp"
#include "format/schema.hpp"
#include "iceberg/partition.hpp"
#include "iceberg/schema.hpp"

#include <cctype>

namespace iss::config::detail {

namespace {

bool http_url(std::string_view u) { return u.starts_with("http://") || u.starts_with("https://"); }

std::string_view auth_name(iceberg::auth_kind t) { return choice_name(t, catalog_auth_choices); }

/// A key of another auth type than the one set is a mistake (a half-edited file: the secret
/// meant for one scheme lying unused, or the type left at none): named, never ignored.
void check_stray_auth_keys(collector& add, const catalog_auth_section& a, const std::string& p) {
    const catalog_auth_section defaults;
    const struct {
        const char* key;
        bool set;
        iceberg::auth_kind used_by;
    } keys[] = {
        {"token", !a.token.reveal().empty(), iceberg::auth_kind::bearer},
        {"client_id", !a.client_id.empty(), iceberg::auth_kind::oauth2},
        {"client_secret", !a.client_secret.reveal().empty(), iceberg::auth_kind::oauth2},
        {"token_endpoint", !a.token_endpoint.empty(), iceberg::auth_kind::oauth2},
        {"scope", a.scope != defaults.scope, iceberg::auth_kind::oauth2},
        {"signing_name", !a.signing_name.empty(), iceberg::auth_kind::sigv4},
        {"signing_region", !a.signing_region.empty(), iceberg::auth_kind::sigv4},
    };
    for (const auto& k : keys)
        if (k.set && k.used_by != a.type)
            add(p + "." + k.key, "is set, but auth.type is {} (only {} uses it): remove it, or set auth.type: {}",
                auth_name(a.type), auth_name(k.used_by), auth_name(k.used_by));
}

void check_auth(collector& add, const catalog_auth_section& a) {
    const std::string p = "iceberg.catalog.auth";
    check_stray_auth_keys(add, a, p);
    switch (a.type) {
        case iceberg::auth_kind::none: break;
        case iceberg::auth_kind::bearer:
            if (a.token.reveal().empty()) add(p + ".token", "is required with auth.type bearer");
            break;
        case iceberg::auth_kind::oauth2:
            if (a.client_id.empty()) add(p + ".client_id", "is required with auth.type oauth2");
            if (a.client_secret.reveal().empty()) add(p + ".client_secret", "is required with auth.type oauth2");
            if (!a.token_endpoint.empty() && !http_url(a.token_endpoint))
                add(p + ".token_endpoint", "must be an http:// or https:// URL, not {:?}", a.token_endpoint);
            if (a.scope.empty()) add(p + ".scope", "must not be empty with auth.type oauth2 (the default is catalog)");
            break;
        case iceberg::auth_kind::sigv4:
            if (a.signing_name.empty())
                add(p + ".signing_name",
                    "is required with auth.type sigv4: s3tables (AWS S3 Tables) or glue (the Glue Iceberg endpoint)");
            break;
    }
}

void check_table_name(collector& add, const std::string& table) {
    if (table.empty()) {
        add("iceberg.table", "must not be empty");
        return;
    }
    for (std::size_t i = table.find('{'); i != std::string::npos; i = table.find('{', i + 1)) {
        const auto close = table.find('}', i);
        const std::string_view name = close == std::string::npos ? std::string_view{table}.substr(i)
                                                                 : std::string_view{table}.substr(i + 1, close - i - 1);
        if (close == std::string::npos || (name != "stream" && name != "topic"))
            add("iceberg.table", "has placeholder {:?}; only {{stream}} and {{topic}} are replaced", name);
    }
    // The literal text (outside the placeholders) becomes part of a REST path segment and of
    // the table's location: a '/' would make a table named `app/events` (a folder in its
    // location), a '.' reads as a namespace separator in most engines' SQL.
    std::string bad;
    for (std::size_t i = 0; i < table.size(); ++i) {
        if (table.compare(i, 8, "{stream}") == 0) i += 7;
        else if (table.compare(i, 7, "{topic}") == 0) i += 6;
        else if (const char ch = table[i];
                 !(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '{' || ch == '}') &&
                 bad.find(ch) == std::string::npos)
            bad += ch;
    }
    if (!bad.empty())
        add("iceberg.table",
            "has {:?}, not valid in a table name: use letters, digits, '_' or '-' besides {{stream}} and {{topic}} "
            "(e.g. \"{{stream}}_{{topic}}\")",
            bad);
}

}  // namespace

void check_iceberg(collector& add, const sink_config& c) {
    const auto& i = c.iceberg;
    if (!i.enabled) return;
    if (c.format.type != format::record_format::parquet)
        add("iceberg",
            "needs format.type parquet, not {}: the objects become the table's data files, and this sink writes "
            "Iceberg data files as Parquet (with the field ids the table's schema gives)",
            choice_name(c.format.type, format_type_choices));
    if (i.catalog.uri.empty()) add("iceberg.catalog.uri", "is required: the Iceberg REST catalog's http(s) URL");
    else if (!http_url(i.catalog.uri))
        add("iceberg.catalog.uri", "must be an http:// or https:// URL, not {:?}", i.catalog.uri);
    if (i.catalog.prefix.starts_with('/') || i.catalog.prefix.ends_with('/'))
        add("iceberg.catalog.prefix", "must not start or end with /");
    check_auth(add, i.catalog.auth);
    if (i.namespace_name.empty() || i.namespace_name.starts_with('.') || i.namespace_name.ends_with('.') ||
        i.namespace_name.find("..") != std::string::npos)
        add("iceberg.namespace", "must be one or more names separated by dots, not {:?}", i.namespace_name);
    check_table_name(add, i.table);
    if (i.commit_interval <= milliseconds{0}) add("iceberg.commit_interval", "must be > 0");

    // The table's columns: format.schema, or the envelope's when it is absent. Columns with
    // problems of their own are reported by check_format; only well-formed ones are used here,
    // and partition_by entries on the others are checked for their syntax only.
    std::vector<format::column> cols;
    std::vector<std::string> bad_columns;
    for (const auto& s : c.format.schema) {
        format::column col;
        if (format::make_column(s.name, s.type, s.from, s.nullable, col).empty()) cols.push_back(std::move(col));
        else bad_columns.push_back(s.name);
    }
    if (c.format.schema.empty()) cols = format::envelope_schema(c.format.headers, format::envelope_payload::string);
    for (const auto& p : iceberg::unsupported_columns(cols)) add("format.schema", "{} (iceberg is set)", p);
    for (const auto& p : iceberg::check_partition_by(i.partition_by, cols, bad_columns))
        add("iceberg.partition_by", "{}", p);
}

}  // namespace iss::config::detail
