// SPDX-License-Identifier: Apache-2.0
#include "s3/checksum.hpp"

#include "common/base64.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstring>
#include <utility>

#if defined(__x86_64__)
#include <nmmintrin.h>
#elif defined(__aarch64__) && !defined(__clang__)
#include <arm_acle.h>
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
// Slicing-by-8 tables for the reflected Castagnoli polynomial 0x82F63B78.
struct crc_tables {
    std::array<std::array<std::uint32_t, 256>, 8> t{};
    constexpr crc_tables() {
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? (c >> 1) ^ 0x82F63B78U : c >> 1;
            t[0][i] = c;
        }
        for (std::uint32_t i = 0; i < 256; ++i)
            for (std::size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFFU];
    }
};
constexpr crc_tables tables{};

/// Table-driven CRC-32C (slicing by 8), on the complemented register.
std::uint32_t crc32c_table(const unsigned char* p, std::size_t n, std::uint32_t c) noexcept {
    const auto& t = tables.t;
    while (n >= 8) {
        const std::uint32_t lo = c ^ (static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                                      static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24);
        c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
            t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFF];
    return c;
}

#if defined(__x86_64__)
/// Bytes per stream in the three-stream loop of crc32c_sse42.
constexpr std::size_t crc_stream = 4096;

/// SSE4.2's CRC32 instruction over `p[0, n)` from register `c`, one stream.
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42_one(const unsigned char* p, std::size_t n,
                                                                 std::uint32_t c) noexcept {
    std::uint64_t c64 = c;
    while (n >= 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, p, 8);
        c64 = _mm_crc32_u64(c64, w);
        p += 8;
        n -= 8;
    }
    auto c32 = static_cast<std::uint32_t>(c64);
    while (n-- > 0) c32 = _mm_crc32_u8(c32, *p++);
    return c32;
}

/// The register after `crc_stream` zero bytes from register `c`, by tables: the CRC is linear
/// over GF(2) in the register, so the operator is the XOR of its images of the 32 bits, laid
/// out per byte (4 x 256 entries), each image computed once with the instruction itself.
struct crc_zeros_operator {
    std::array<std::array<std::uint32_t, 256>, 4> t{};
    __attribute__((target("sse4.2"))) crc_zeros_operator() noexcept {
        static const std::array<unsigned char, crc_stream> zeros{};
        std::array<std::uint32_t, 32> bit{};
        for (std::size_t b = 0; b < 32; ++b)
            bit[b] = crc32c_sse42_one(zeros.data(), zeros.size(), std::uint32_t{1} << b);
        for (std::size_t k = 0; k < 4; ++k)
            for (std::uint32_t v = 0; v < 256; ++v) {
                std::uint32_t image = 0;
                for (std::size_t b = 0; b < 8; ++b)
                    if ((v >> b) & 1U) image ^= bit[8 * k + b];
                t[k][v] = image;
            }
    }
    [[nodiscard]] std::uint32_t apply(std::uint32_t c) const noexcept {
        return t[0][c & 0xFFU] ^ t[1][(c >> 8) & 0xFFU] ^ t[2][(c >> 16) & 0xFFU] ^ t[3][c >> 24];
    }
};

/// SSE4.2's CRC32 instruction computes exactly CRC-32C (the Castagnoli polynomial, reflected),
/// 8 bytes per step, on the complemented register (Intel SDM vol. 2A, "CRC32"). The
/// instruction takes 3 cycles and can start every cycle, so one stream runs at a third of
/// what the unit allows: blocks of 3 x crc_stream bytes are summed as three independent
/// streams (the second and third from register 0) and joined by linearity,
/// crc(r, A B) = zeros(crc(r, A), |B|) ^ crc(0, B), with the zeros operator above.
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(const unsigned char* p, std::size_t n,
                                                             std::uint32_t c) noexcept {
    if (n >= 3 * crc_stream) {
        static const crc_zeros_operator shift{};
        do {
            std::uint64_t a = c;
            std::uint64_t b = 0;
            std::uint64_t d = 0;
            for (std::size_t i = 0; i < crc_stream; i += 8) {
                std::uint64_t wa = 0;
                std::uint64_t wb = 0;
                std::uint64_t wd = 0;
                std::memcpy(&wa, p + i, 8);
                std::memcpy(&wb, p + crc_stream + i, 8);
                std::memcpy(&wd, p + 2 * crc_stream + i, 8);
                a = _mm_crc32_u64(a, wa);
                b = _mm_crc32_u64(b, wb);
                d = _mm_crc32_u64(d, wd);
            }
            c = shift.apply(shift.apply(static_cast<std::uint32_t>(a)) ^ static_cast<std::uint32_t>(b)) ^
                static_cast<std::uint32_t>(d);
            p += 3 * crc_stream;
            n -= 3 * crc_stream;
        } while (n >= 3 * crc_stream);
    }
    return crc32c_sse42_one(p, n, c);
}
// __builtin_cpu_init first: this initialiser may run before libgcc's own constructor.
const bool have_crc_instruction = (__builtin_cpu_init(), __builtin_cpu_supports("sse4.2") != 0);
#elif defined(__aarch64__) && !defined(__clang__)
/// ARMv8's CRC32C* instructions (the CRC extension: optional in ARMv8.0, mandatory from
/// ARMv8.1) compute exactly CRC-32C (the Castagnoli polynomial, reflected),
/// 8 bytes per CRC32CX, on the complemented register (Arm A64 ISA, "CRC32C"). GCC's
/// arm_acle.h makes the intrinsics usable in a function built for `+crc` whatever -march is;
/// Clang 14's does not (the tables serve there).
__attribute__((target("+crc"))) std::uint32_t crc32c_armv8(const unsigned char* p, std::size_t n,
                                                           std::uint32_t c) noexcept {
    while (n >= 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, p, 8);
        c = __crc32cd(c, w);
        p += 8;
        n -= 8;
    }
    while (n-- > 0) c = __crc32cb(c, *p++);
    return c;
}
// The kernel's word on the CPU: HWCAP_CRC32 in the auxiliary vector (the instruction itself
// cannot be probed from user space without a SIGILL handler).
const bool have_crc_instruction = (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#else
constexpr bool have_crc_instruction = false;
#endif
}  // namespace

bool crc32c_hardware() noexcept { return have_crc_instruction; }

std::uint32_t crc32c(std::string_view data, std::uint32_t crc) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
#if defined(__x86_64__)
    if (have_crc_instruction) return ~crc32c_sse42(p, data.size(), ~crc);
#elif defined(__aarch64__) && !defined(__clang__)
    if (have_crc_instruction) return ~crc32c_armv8(p, data.size(), ~crc);
#endif
    return ~crc32c_table(p, data.size(), ~crc);
}

std::uint32_t crc32c_portable(std::string_view data, std::uint32_t crc) noexcept {
    return ~crc32c_table(reinterpret_cast<const unsigned char*>(data.data()), data.size(), ~crc);
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
