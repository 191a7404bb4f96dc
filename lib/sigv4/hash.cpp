// SPDX-License-Identifier: Apache-2.0
#include "sigv4/hash.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cassert>

namespace iss::sigv4 {

digest sha256(std::string_view data) noexcept {
    digest out{};
    unsigned int len = 0;
    [[maybe_unused]] const int ok = EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(), nullptr);
    assert(ok == 1 && len == out.size());
    return out;
}

std::string sha256_hex(std::string_view data) { return to_hex(sha256(data)); }

digest hmac_sha256(std::span<const std::uint8_t> key, std::string_view data) noexcept {
    digest out{};
    unsigned int len = 0;
    [[maybe_unused]] const unsigned char* r =
        HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
    assert(r != nullptr && len == out.size());
    return out;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(bytes.size() * 2, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0x0f];
    }
    return out;
}

bool is_sha256_hex(std::string_view s) noexcept {
    if (s.size() != 64) return false;
    for (char c : s) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

struct sha256_hasher::impl {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    impl() { reset(); }
    ~impl() { EVP_MD_CTX_free(ctx); }
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;
    void reset() noexcept {
        [[maybe_unused]] const int ok = EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
        assert(ok == 1);
    }
};

sha256_hasher::sha256_hasher() : impl_{std::make_unique<impl>()} {}
sha256_hasher::~sha256_hasher() = default;
sha256_hasher::sha256_hasher(sha256_hasher&&) noexcept = default;
sha256_hasher& sha256_hasher::operator=(sha256_hasher&&) noexcept = default;

void sha256_hasher::update(std::string_view data) noexcept {
    [[maybe_unused]] const int ok = EVP_DigestUpdate(impl_->ctx, data.data(), data.size());
    assert(ok == 1);
}

digest sha256_hasher::finish() noexcept {
    digest out{};
    unsigned int len = 0;
    [[maybe_unused]] const int ok = EVP_DigestFinal_ex(impl_->ctx, out.data(), &len);
    assert(ok == 1 && len == out.size());
    impl_->reset();
    return out;
}

std::string sha256_hasher::finish_hex() { return to_hex(finish()); }

void sha256_hasher::reset() noexcept { impl_->reset(); }

}  // namespace iss::sigv4
