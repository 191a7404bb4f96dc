// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fixed environment for config tests (the loader's env lookup is injected).
#include "config/config.hpp"

#include <map>
#include <string>

namespace iss::config::test {

inline env_lookup fixed_env(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
        auto it = vars.find(std::string{name});
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

/// The issue's example file: every section, secrets from the environment.
inline constexpr const char* full_yaml = R"(
iggy: {address: 127.0.0.1:8090, username: iggy, password: "${IGGY_PASSWORD}", token: "",
       tls: {enabled: false, ca_file: "", server_name: ""},
       consumer_group: s3-sink,
       poll: {messages: 1000, interval: 100ms}, verify_checksum: true, max_response_bytes: 64MiB}
sources: [{stream: app, topics: [requests, errors], partitions: all}]
s3: {bucket: lake, region: us-east-1, endpoint: "", path_style: auto, prefix: iggy,
     access_key_id: "${AWS_ACCESS_KEY_ID}", secret_access_key: "${AWS_SECRET_ACCESS_KEY}", session_token: "",
     tls: {ca_file: "", insecure: false}, part_size: 8MiB, checksum: md5, payload_signing: signed,
     conditional_writes: auto,
     timeouts: {connect: 5s, request: 10s},
     retry: {attempts: 10, base: 200ms, cap: 5s, deadline: 15s}}
format: {type: json_lines, compression: none, metadata: true, headers: true, payload: auto, separator: "\n"}
rotation: {max_records: 10000, max_bytes: 64MiB, max_span: 10m, schedule: 1h, timezone: UTC, idle: 1m}
naming: {key: "{prefix}/{stream}/{topic}/partition={partition}/{stream}+{topic}+{partition}+{start_offset:020}.{ext}"}
delivery: {on_bad_message: fail, dead_letter: {stream: app, topic: s3-dead-letter}}
shutdown: {grace: 30s}
log: {level: info, format: text}
)";

inline env_lookup full_env() {
    return fixed_env({{"IGGY_PASSWORD", "iggy-secret"},
                      {"AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"},
                      {"AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}});
}

/// A small valid file for validation tests; `extra` is appended (later keys of a section
/// must not repeat these).
inline std::string minimal_yaml() {
    return "iggy: {password: pw}\n"
           "sources: [{stream: app, topics: [requests]}]\n"
           "s3: {bucket: lake, access_key_id: AK, secret_access_key: SK}\n";
}

}  // namespace iss::config::test
