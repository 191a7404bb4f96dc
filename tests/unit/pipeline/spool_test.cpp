// SPDX-License-Identifier: Apache-2.0
// The spool file (lib/pipeline/spool.hpp): whole parts appended, mapped back where they lie;
// files reused through a bounded set of spares.
#include "pipeline/spool.hpp"

#include "pipeline/health.hpp"

#include "catch2_compat.hpp"
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace pl = iss::pipeline;

TEST_CASE("spool: parts appended are mapped back byte for byte, at any offset", "[pipeline][spool]") {
    pl::spool s;
    std::string bytes;
    for (int i = 0; i < 20'000; ++i) bytes += static_cast<char>('a' + (i * 7) % 26);
    REQUIRE(s.append(std::string_view{bytes}.substr(0, 12'345)).has_value());
    REQUIRE(s.append(std::string_view{bytes}.substr(12'345)).has_value());
    CHECK(s.size() == bytes.size());
    // Offsets off the page size (parts of a size such as 5 000 000 bytes).
    for (std::uint64_t off : {0ull, 1ull, 4095ull, 4096ull, 4097ull, 12'345ull, 19'999ull}) {
        const std::size_t len = bytes.size() - off < 3'000 ? bytes.size() - off : 3'000;
        auto m = s.map(off, len);
        REQUIRE(m.has_value());
        CHECK(m->bytes() == std::string_view{bytes}.substr(off, len));
    }
    auto whole = s.map(0, bytes.size());
    REQUIRE(whole.has_value());
    pl::spool::mapping moved = std::move(*whole);
    CHECK(moved.bytes() == bytes);
    CHECK(whole->bytes().empty());
    // Beyond the end: an error naming the spool, not a short view.
    auto past = s.map(19'000, 2'000);
    REQUIRE_FALSE(past.has_value());
    CHECK(past.error().message().find("spool") != std::string::npos);
}

TEST_CASE("spool: after clear the file starts over", "[pipeline][spool]") {
    pl::spool s;
    REQUIRE(s.append("first object").has_value());
    s.clear();
    CHECK(s.size() == 0);
    CHECK_FALSE(s.map(0, 1).has_value());
    REQUIRE(s.append("second").has_value());
    auto m = s.map(0, 6);
    REQUIRE(m.has_value());
    CHECK(m->bytes() == "second");
}

TEST_CASE("spool: a reused file maps back only the new spool's bytes, never the previous object's tail",
          "[pipeline][spool]") {
    const std::string longer(20'000, 'a');
    {
        pl::spool first;
        REQUIRE(first.append(longer).has_value());
    }  // its file becomes a spare
    const auto before = pl::spool::spares();
    REQUIRE(before.files >= 1);
    pl::spool second;
    REQUIRE(second.append("bbbb").has_value());
    CHECK(pl::spool::spares().files == before.files - 1);  // it took the spare
    CHECK(second.size() == 4);
    auto m = second.map(0, 4);
    REQUIRE(m.has_value());
    CHECK(m->bytes() == "bbbb");
    CHECK_FALSE(second.map(0, 5).has_value());  // the old 'a's beyond are not its bytes
    second.clear();
    REQUIRE(second.append("cc").has_value());
    auto c = second.map(0, 2);
    REQUIRE(c.has_value());
    CHECK(c->bytes() == "cc");
    CHECK_FALSE(second.map(1, 2).has_value());
}

TEST_CASE("spool: spare files are bounded in number and length, and kept per directory", "[pipeline][spool]") {
    {
        std::vector<pl::spool> many(pl::spool::max_spare_files + 3);
        for (auto& s : many) REQUIRE(s.append("x").has_value());
        // One longer than a spare may stay: cut when it is given back.
        pl::spool big;
        const std::string chunk(1 << 20, 'y');
        for (std::uint64_t n = 0; n <= pl::spool::max_spare_bytes; n += chunk.size())
            REQUIRE(big.append(chunk).has_value());
    }
    // `big` (65 MiB) went back first, cut to 64 MiB; three of the small ones (at most the
    // 20 000 bytes of a reused file each) filled the rest.
    const auto kept = pl::spool::spares();
    CHECK(kept.files == pl::spool::max_spare_files);
    CHECK(kept.bytes >= pl::spool::max_spare_bytes);
    CHECK(kept.bytes < pl::spool::max_spare_bytes + (1U << 20));

    // A spool whose reuse limit is below every spare's length makes a file of its own.
    {
        pl::spool limited{{}, 0};
        REQUIRE(limited.append("q").has_value());
        CHECK(pl::spool::spares().files == pl::spool::max_spare_files);
        CHECK(limited.disk_bytes() == 1);
    }
    // A spool that reuses the 64 MiB file is charged its length until its own bytes pass it.
    {
        pl::spool reused;
        REQUIRE(reused.append("r").has_value());
        CHECK(reused.size() == 1);
        CHECK(reused.disk_bytes() >= 1);
        CHECK(pl::spool::spares().files == pl::spool::max_spare_files - 1);
    }

    // A spool in another directory makes its own file and leaves these spares alone.
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("iss-spool-test-{}", ::getpid());
    std::filesystem::create_directories(dir);
    {
        pl::spool elsewhere{dir.string()};
        REQUIRE(elsewhere.append("z").has_value());
        CHECK(pl::spool::spares().files == pl::spool::max_spare_files);
    }
    std::filesystem::remove_all(dir);
}

namespace {
/// Resident bytes of the mapping that holds `inside` (its own `Rss:` in /proc/self/smaps):
/// exact, whether the spool lies on a disk file system or tmpfs, and blind to the test's own
/// code pages.
std::uint64_t mapping_rss(const void* inside) {
    std::ifstream in{"/proc/self/smaps"};
    std::string line;
    bool ours = false;
    const auto at = reinterpret_cast<std::uintptr_t>(inside);
    while (std::getline(in, line)) {
        const auto dash = line.find('-');
        const auto space = line.find(' ');
        if (dash != std::string::npos && space != std::string::npos && dash < space &&
            line.find_first_not_of("0123456789abcdef") == dash) {
            const auto lo = std::stoull(line.substr(0, dash), nullptr, 16);
            const auto hi = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
            ours = at >= lo && at < hi;
        } else if (ours && line.rfind("Rss:", 0) == 0) {
            return std::stoull(line.substr(4)) * 1024;
        }
    }
    return 0;
}
}  // namespace

TEST_CASE("spool: a mapped part holds about one window of memory while it is read and released stretch by stretch",
          "[pipeline][spool]") {
    // A part mapped for an upload: before, the whole part was populated at once (8 MiB of
    // RSS per part going up); now a window ahead of the reader, and what was sent leaves.
    pl::spool s;
    std::string bytes(16 << 20, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>('a' + (i * 131 + i / 4099) % 26);
    for (std::size_t at = 0; at < bytes.size(); at += 1 << 20)
        REQUIRE(s.append(std::string_view{bytes}.substr(at, 1 << 20)).has_value());
    const std::uint64_t off = 4097;  // off the page size
    const std::size_t len = 12 << 20;
    const std::string_view want = std::string_view{bytes}.substr(off, len);
    // The kernel maps a window's page-cache folios whole (up to 2 MiB each, on either side):
    // a third of the part, against all of it without release.
    constexpr std::uint64_t bound = len / 3;

    auto m = s.map(off, len);
    REQUIRE(m.has_value());
    const std::string_view got = m->bytes();
    CHECK(mapping_rss(got.data()) <= bound);
    std::uint64_t peak = 0;
    for (std::size_t at = 0; at < len; at += 256 << 10) {
        const std::string_view stretch = got.substr(at, 256 << 10);
        REQUIRE(stretch == want.substr(at, 256 << 10));
        m->release(stretch);
        peak = std::max(peak, mapping_rss(got.data()));
    }
    CHECK(peak <= bound);
    m->release(std::string_view{"outside the mapping"});  // ignored
    // Released pages come back from the page cache when read again (a retry): the same bytes.
    CHECK(got == want);

    // The same reads without release keep the whole part: the measure above can tell.
    auto kept = s.map(off, len);
    REQUIRE(kept.has_value());
    CHECK(kept->bytes() == want);
    CHECK(mapping_rss(kept->bytes().data()) >= len - (1 << 20));
}

TEST_CASE("spool: the directory check names a missing directory, too little room, and passes otherwise",
          "[pipeline][spool][health]") {
    const auto missing = pl::spool::check_directory("/nonexistent/iggy-s3-sink-spool-check", 1);
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code().value() == ENOENT);
    CHECK(pl::spool_error_reason_of(missing.error().code().value()) == pl::spool_error_reason::missing);
    const std::string tmp = std::filesystem::temp_directory_path().string();
    CHECK(pl::spool::check_directory(tmp, 1).has_value());
    const auto full = pl::spool::check_directory(tmp, ~std::uint64_t{0} / 2);  // more room than any disk has
    REQUIRE_FALSE(full.has_value());
    CHECK(full.error().code().value() == ENOSPC);
    CHECK(pl::spool_error_reason_of(full.error().code().value()) == pl::spool_error_reason::no_space);
    CHECK(pl::spool_error_reason_of(EROFS) == pl::spool_error_reason::read_only);
    CHECK(pl::spool_error_reason_of(EIO) == pl::spool_error_reason::io_error);
    // An append in a directory that is gone fails with the system's code, and keeps nothing.
    pl::spool s{"/nonexistent/iggy-s3-sink-spool-check"};
    const auto w = s.append("bytes");
    REQUIRE_FALSE(w.has_value());
    CHECK(w.error().code().value() == ENOENT);
    CHECK(s.size() == 0);
}
