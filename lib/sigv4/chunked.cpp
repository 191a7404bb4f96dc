// SPDX-License-Identifier: Apache-2.0
#include "sigv4/chunked.hpp"

#include <fmt/format.h>

namespace iss::sigv4 {

namespace {
constexpr std::uint64_t signature_line_overhead = std::string_view{";chunk-signature="}.size() + 64 + 2;  // + "\r\n"

std::uint64_t hex_digits(std::uint64_t v) noexcept {
    std::uint64_t n = 1;
    while (v >= 16) {
        v /= 16;
        ++n;
    }
    return n;
}
}  // namespace

std::uint64_t aws_chunk_wire_size(std::uint64_t size) noexcept {
    return hex_digits(size) + signature_line_overhead + size + 2;
}

std::uint64_t aws_chunked_content_length(std::uint64_t decoded_length, std::uint64_t chunk_size) noexcept {
    const std::uint64_t full = decoded_length / chunk_size;
    const std::uint64_t rest = decoded_length % chunk_size;
    std::uint64_t n = full * aws_chunk_wire_size(chunk_size);
    if (rest > 0) n += aws_chunk_wire_size(rest);
    return n + aws_chunk_wire_size(0);
}

chunk_signer::chunk_signer(const signed_headers& seed)
    : key_{seed.key}, amz_date_{seed.amz_date}, scope_{seed.scope}, previous_{seed.signature} {}

std::string chunk_signer::string_to_sign(std::string_view data_sha256_hex) const {
    // "AWS4-HMAC-SHA256-PAYLOAD" + "\n" + timestamp + "\n" + scope + "\n" + previous-signature
    // + "\n" + Hex(SHA256("")) + "\n" + Hex(SHA256(current-chunk-data))  (sigv4-streaming.html)
    std::string sts;
    sts.reserve(chunk_algorithm.size() + amz_date_.size() + scope_.size() + 3 * 64 + 5);
    sts += chunk_algorithm;
    sts += '\n';
    sts += amz_date_;
    sts += '\n';
    sts += scope_;
    sts += '\n';
    sts += previous_;
    sts += '\n';
    sts += empty_payload_sha256;
    sts += '\n';
    sts += data_sha256_hex;
    return sts;
}

result<std::string> chunk_signer::sign_chunk(std::string_view data) {
    if (finished_) return error{errc::chunk_after_final};
    previous_ = to_hex(hmac_sha256(key_.bytes, string_to_sign(sha256_hex(data))));
    if (data.empty()) finished_ = true;
    return previous_;
}

result<std::string> chunk_signer::chunk_header(std::string_view data) {
    auto sig = sign_chunk(data);
    if (!sig) return sig.error();
    return fmt::format("{:x};chunk-signature={}\r\n", data.size(), *sig);
}

}  // namespace iss::sigv4
