// SPDX-License-Identifier: Apache-2.0
#include "iceberg/names.hpp"

namespace iss::iceberg {

std::string table_name(std::string_view tmpl, std::string_view stream, std::string_view topic) {
    std::string out;
    while (!tmpl.empty()) {
        if (tmpl.starts_with("{stream}")) {
            out += stream;
            tmpl.remove_prefix(8);
        } else if (tmpl.starts_with("{topic}")) {
            out += topic;
            tmpl.remove_prefix(7);
        } else {
            out += tmpl.front();
            tmpl.remove_prefix(1);
        }
    }
    return out;
}

std::vector<std::string> namespace_levels(std::string_view ns) {
    std::vector<std::string> out;
    for (;;) {
        const auto dot = ns.find('.');
        out.emplace_back(ns.substr(0, dot));
        if (dot == std::string_view::npos) return out;
        ns.remove_prefix(dot + 1);
    }
}

result<s3_location> split_location(std::string_view location) {
    std::string_view rest = location;
    bool s3 = false;
    for (std::string_view scheme : {"s3://", "s3a://", "s3n://"})
        if (rest.starts_with(scheme)) {
            rest.remove_prefix(scheme.size());
            s3 = true;
            break;
        }
    const auto slash = rest.find('/');
    if (!s3 || rest.empty() || slash == 0)
        return error{iss::errc::parse_error,
                     "table location " + std::string{location} + " is not an s3://bucket/path URI"};
    s3_location l;
    l.bucket = std::string{rest.substr(0, slash)};
    std::string_view prefix = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    while (prefix.starts_with('/')) prefix.remove_prefix(1);
    while (prefix.ends_with('/')) prefix.remove_suffix(1);
    l.prefix = std::string{prefix};
    return l;
}

std::string data_key(const s3_location& table, std::string_view partition_path, std::string_view file_name) {
    std::string key = table.prefix;
    if (!key.empty()) key += '/';
    key += "data/";
    if (!partition_path.empty()) {
        key += partition_path;
        key += '/';
    }
    key += file_name;
    return key;
}

}  // namespace iss::iceberg
