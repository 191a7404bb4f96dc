// SPDX-License-Identifier: Apache-2.0
#include "s3/checksum.hpp"

#include "common/base64.hpp"

#include <isa-l/crc.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace iss::s3 {

std::string content_md5(std::span<const std::string_view> parts) {
    body_digester d{digest_set{.md5 = true}};
    for (auto p : parts) d.update(p);
    return content_md5_value(*d.finish().md5);
}

std::string content_md5_value(const std::array<std::uint8_t, 16>& md5) { return iss::base64_encode(md5); }

struct body_digester::md5_ctx {
    md5_ctx() : ctx{EVP_MD_CTX_new()} { start(); }
    ~md5_ctx() { EVP_MD_CTX_free(ctx); }
    md5_ctx(const md5_ctx&) = delete;
    md5_ctx& operator=(const md5_ctx&) = delete;
    void start() noexcept { EVP_DigestInit_ex(ctx, EVP_md5(), nullptr); }
    EVP_MD_CTX* ctx;
};

body_digester::body_digester(digest_set which) : which_{which} {
    if (which_.md5) md5_ = std::make_unique<md5_ctx>();
    if (which_.sha256) sha256_.emplace();
}
body_digester::~body_digester() = default;
body_digester::body_digester(body_digester&&) noexcept = default;
body_digester& body_digester::operator=(body_digester&&) noexcept = default;

void body_digester::update(std::string_view data) noexcept {
    if (which_.crc32c) crc_ = crc32c(data, crc_);
    if (md5_) EVP_DigestUpdate(md5_->ctx, data.data(), data.size());
    if (sha256_) sha256_->update(data);
}

body_digests body_digester::finish() noexcept {
    body_digests d;
    if (which_.crc32c) d.crc32c = std::exchange(crc_, 0);
    if (md5_) {
        std::array<std::uint8_t, 16> m{};
        unsigned len = 0;
        EVP_DigestFinal_ex(md5_->ctx, m.data(), &len);
        md5_->start();
        d.md5 = m;
    }
    if (sha256_) d.sha256 = sha256_->finish();
    return d;
}

namespace {

/// ISA-L's CRC-32C (`crc32_iscsi`, isa-l/crc.h) works on the register as it is: it neither
/// complements the initial value nor the result, and takes an int length. The standard CRC-32C
/// (RFC 3720 B.4) starts from all ones and complements at the end, so `crc` (a finished value,
/// 0 to start) goes in complemented and comes out complemented; bodies above INT_MAX go in
/// pieces (the register carries over).
template <unsigned (*Crc)(unsigned char*, int, unsigned)>
std::uint32_t crc32c_with(std::string_view data, std::uint32_t crc) noexcept {
    constexpr std::size_t max_chunk = std::size_t{1} << 30;
    // ISA-L reads the buffer only; its prototype predates const.
    auto* p = reinterpret_cast<unsigned char*>(const_cast<char*>(data.data()));
    std::uint32_t reg = ~crc;
    for (std::size_t left = data.size(); left > 0;) {
        const std::size_t n = std::min(left, max_chunk);
        reg = Crc(p, static_cast<int>(n), reg);
        p += n;
        left -= n;
    }
    return ~reg;
}

// ISA-L dispatches crc32_iscsi at its first call to the best of its versions for the CPU: the
// CRC32 instruction (x86-64 SSE4.2, with PCLMULQDQ folding where present; AArch64's CRC
// extension), else its table version, crc32_iscsi_base.
#if defined(__x86_64__)
// __builtin_cpu_init first: this initialiser may run before libgcc's own constructor.
const bool have_crc_instruction = (__builtin_cpu_init(), __builtin_cpu_supports("sse4.2") != 0);
#elif defined(__aarch64__)
const bool have_crc_instruction = (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#else
constexpr bool have_crc_instruction = false;
#endif
}  // namespace

bool crc32c_hardware() noexcept { return have_crc_instruction; }

std::uint32_t crc32c(std::string_view data, std::uint32_t crc) noexcept { return crc32c_with<crc32_iscsi>(data, crc); }

std::uint32_t crc32c_portable(std::string_view data, std::uint32_t crc) noexcept {
    return crc32c_with<crc32_iscsi_base>(data, crc);
}

std::string crc32c_base64(std::span<const std::string_view> parts) {
    std::uint32_t c = 0;
    for (auto p : parts) c = crc32c(p, c);
    return crc32c_header_value(c);
}

std::string crc32c_header_value(std::uint32_t c) {
    const std::array<std::uint8_t, 4> be{static_cast<std::uint8_t>(c >> 24), static_cast<std::uint8_t>(c >> 16),
                                         static_cast<std::uint8_t>(c >> 8), static_cast<std::uint8_t>(c)};
    return iss::base64_encode(be);
}

}  // namespace iss::s3
