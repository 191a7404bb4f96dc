#include "daemon/s3_wiring.hpp"

namespace iss::app {

s3::client_options s3_options(const config::sink_config& c) {
    const auto& s = c.s3;
    s3::client_options o;
    o.endpoint = s.endpoint;
    o.region = s.region.get();
    switch (s.path_style) {
        case config::path_style::automatic: o.style = s3::addressing::automatic; break;
        case config::path_style::path: o.style = s3::addressing::path; break;
        case config::path_style::virtual_hosted: o.style = s3::addressing::virtual_hosted; break;
    }
    o.credentials = {s.access_key_id, s.secret_access_key, s.session_token};
    switch (s.checksum) {
        case config::checksum_kind::md5: o.checksum = s3::checksum_kind::md5; break;
        case config::checksum_kind::crc32c: o.checksum = s3::checksum_kind::crc32c; break;
        case config::checksum_kind::none: o.checksum = s3::checksum_kind::none; break;
    }
    o.payload = s.payload_signing == config::payload_signing::unsigned_payload ? s3::payload_signing::unsigned_payload
                                                                               : s3::payload_signing::signed_payload;
    o.part_size = s.part_size;
    o.retry.attempts = s.retry.attempts;
    o.retry.base = s.retry.base;
    o.retry.cap = s.retry.cap;
    o.retry.deadline = s.retry.deadline;
    o.http.tls.ca_file = s.tls.ca_file;
    o.http.tls.insecure = s.tls.insecure;
    o.http.timeout.connect = s.timeouts.connect;
    o.http.timeout.handshake = s.timeouts.connect;
    o.http.timeout.resolve = s.timeouts.connect;
    o.http.timeout.write = s.timeouts.request;
    o.http.timeout.read = s.timeouts.request;
    return o;
}

}  // namespace iss::app
