// SPDX-License-Identifier: Apache-2.0
#include "pipeline/spool.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

namespace iss::pipeline {

namespace {
/// The failed operation, with the system's code (errno: spool_error_reason_of sorts it).
error io_error(std::string_view what) {
    const int e = errno;
    return error{error_code{e, boost::system::system_category()}, fmt::format("spool {}: {}", what, std::strerror(e))};
}

/// The spare files (see spool.hpp): unlinked, open, their directory and length.
struct spare_file {
    std::string dir;
    int fd;
    std::uint64_t length;
};
struct spare_registry {
    spare_registry() { files.reserve(spool::max_spare_files); }
    std::mutex mu;
    std::vector<spare_file> files;
};
spare_registry& registry() {
    static spare_registry r;
    return r;
}

/// Keeps `fd` (of `length` bytes, in `dir`) for the next spool in `dir`, cut to
/// spool::max_spare_bytes, or closes it when spool::max_spare_files are kept already.
void give_back(const std::string& dir, int fd, std::uint64_t length) {
    if (length > spool::max_spare_bytes) {
        if (::ftruncate(fd, static_cast<off_t>(spool::max_spare_bytes)) != 0) {
            ::close(fd);
            return;
        }
        length = spool::max_spare_bytes;
    }
    try {
        auto& r = registry();
        std::lock_guard lock{r.mu};
        if (r.files.size() < spool::max_spare_files) {
            r.files.push_back({dir, fd, length});  // (no reallocation: reserved)
            return;
        }
    } catch (...) {  // (copying `dir` may fail to allocate: then the file is just closed)
    }
    ::close(fd);
}

/// A spare file of `dir` at most `limit` bytes long, or -1. `length` gets its length.
int take_spare(const std::string& dir, std::uint64_t limit, std::uint64_t& length) {
    auto& r = registry();
    std::lock_guard lock{r.mu};
    for (auto it = r.files.rbegin(); it != r.files.rend(); ++it) {
        if (it->dir != dir || it->length > limit) continue;
        const int fd = it->fd;
        length = it->length;
        r.files.erase(std::next(it).base());
        return fd;
    }
    return -1;
}
}  // namespace

spool::spares_info spool::spares() noexcept {
    auto& r = registry();
    std::lock_guard lock{r.mu};
    spares_info i;
    for (const auto& f : r.files) {
        ++i.files;
        i.bytes += f.length;
    }
    return i;
}

spool::spool(spool&& o) noexcept
    : dir_{std::move(o.dir_)},
      reuse_limit_{o.reuse_limit_},
      fd_{std::exchange(o.fd_, -1)},
      size_{std::exchange(o.size_, 0)},
      length_{std::exchange(o.length_, 0)} {}

spool& spool::operator=(spool&& o) noexcept {
    if (this != &o) {
        release();
        dir_ = std::move(o.dir_);
        reuse_limit_ = o.reuse_limit_;
        fd_ = std::exchange(o.fd_, -1);
        size_ = std::exchange(o.size_, 0);
        length_ = std::exchange(o.length_, 0);
    }
    return *this;
}

spool::~spool() { release(); }

void spool::release() noexcept {
    if (fd_ >= 0) give_back(dir_, std::exchange(fd_, -1), length_);
    size_ = 0;
    length_ = 0;
}

std::string spool::directory(const std::string& dir) {
    if (!dir.empty()) return dir;
    const char* t = std::getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

result<void> spool::check_directory(const std::string& dir, std::uint64_t need) {
    const std::string d = directory(dir);
    struct statvfs st = {};
    if (::statvfs(d.c_str(), &st) != 0) return io_error(fmt::format("check of {}", d));
    if ((st.f_flag & ST_RDONLY) != 0) {
        errno = EROFS;
        return io_error(fmt::format("check of {}", d));
    }
    if (::access(d.c_str(), W_OK | X_OK) != 0) return io_error(fmt::format("check of {}", d));
    const std::uint64_t room = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
    if (room < need) {
        return error{error_code{ENOSPC, boost::system::system_category()},
                     fmt::format("spool check of {}: {} bytes free, less than one part ({} bytes)", d, room, need)};
    }
    return {};
}

result<void> spool::append(std::string_view bytes) {
    if (fd_ < 0) fd_ = take_spare(dir_, reuse_limit_, length_);
    if (fd_ < 0) {
        const std::string dir = directory(dir_);
        std::string path = dir + "/iggy-s3-sink-spool-XXXXXX";
        std::vector<char> buf(path.begin(), path.end());
        buf.push_back('\0');
        fd_ = ::mkstemp(buf.data());
        if (fd_ < 0) return io_error(fmt::format("create in {}", dir));
        ::unlink(buf.data());  // unlinked: a crash leaves nothing behind
        length_ = 0;
    }
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    std::uint64_t at = size_;
    while (left > 0) {
        const ssize_t n = ::pwrite(fd_, p, left, static_cast<off_t>(at));
        if (n < 0) {
            if (errno == EINTR) continue;
            length_ = std::max(length_, at);  // (what a short write put there is on disk)
            return io_error("write");         // size_ unchanged: the caller keeps the bytes
        }
        p += n;
        left -= static_cast<std::size_t>(n);
        at += static_cast<std::uint64_t>(n);
    }
    size_ = at;
    length_ = std::max(length_, size_);
    return {};
}

spool::mapping::mapping(mapping&& o) noexcept
    : base_{std::exchange(o.base_, nullptr)},
      mapped_{std::exchange(o.mapped_, 0)},
      populated_{std::exchange(o.populated_, 0)},
      view_{std::exchange(o.view_, {})} {}

spool::mapping& spool::mapping::operator=(mapping&& o) noexcept {
    if (this != &o) {
        if (base_) ::munmap(base_, mapped_);
        base_ = std::exchange(o.base_, nullptr);
        mapped_ = std::exchange(o.mapped_, 0);
        populated_ = std::exchange(o.populated_, 0);
        view_ = std::exchange(o.view_, {});
    }
    return *this;
}

spool::mapping::~mapping() {
    if (base_) ::munmap(base_, mapped_);
}

namespace {
std::size_t page_size() noexcept {
    static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return page;
}
}  // namespace

void spool::mapping::populate(std::size_t upto) noexcept {
    upto = std::min(upto, mapped_);
    if (base_ == nullptr || upto <= populated_) return;
#ifdef MADV_POPULATE_READ
    // (populated_ is page-aligned; a kernel without it answers EINVAL: the reads fault instead.)
    (void)::madvise(static_cast<char*>(base_) + populated_, upto - populated_, MADV_POPULATE_READ);
#endif
    const std::size_t page = page_size();
    populated_ = std::min(mapped_, (upto + page - 1) / page * page);
}

void spool::mapping::release(std::string_view stretch) noexcept {
    const char* const lo = static_cast<const char*>(base_);
    if (lo == nullptr || stretch.empty() || stretch.data() < lo || stretch.data() + stretch.size() > lo + mapped_)
        return;
    const std::size_t page = page_size();
    const auto from = static_cast<std::size_t>(stretch.data() - lo);
    const std::size_t to = from + stretch.size();
    // From the page the stretch starts in (its head was sent with the stretch before) to the
    // last page it fills: a page it shares with the next stretch goes with that one. (A
    // released page read again would fault back in with its whole page-cache folio, the
    // released pages around it too.)
    const std::size_t first = from / page * page;
    const std::size_t last = to == mapped_ ? mapped_ : to / page * page;
    if (last > first) (void)::madvise(static_cast<char*>(base_) + first, last - first, MADV_DONTNEED);
    populate(to + populate_window);
}

result<spool::mapping> spool::map(std::uint64_t offset, std::size_t length) const {
    if (offset + length > size_ || fd_ < 0) return error{iss::errc::io_error, "spool map: beyond the end of the file"};
    mapping m;
    if (length == 0) return m;
    const std::uint64_t page = page_size();
    const std::uint64_t start = offset - offset % page;  // mmap offsets are page-aligned
    const auto skip = static_cast<std::size_t>(offset - start);
    void* p = ::mmap(nullptr, skip + length, PROT_READ, MAP_SHARED, fd_, static_cast<off_t>(start));
    if (p == MAP_FAILED) return io_error("map");
    m.base_ = p;
    m.mapped_ = skip + length;
    m.view_ = std::string_view{static_cast<const char*>(p) + skip, length};
    m.populate(skip + mapping::populate_window);
    return m;
}

void spool::clear() { size_ = 0; }  // (the pages are overwritten by the next appends)

}  // namespace iss::pipeline
