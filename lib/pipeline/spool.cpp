#include "pipeline/spool.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace iss::pipeline {

namespace {
error io_error(std::string_view what) {
    return error{iss::errc::io_error, fmt::format("spool {}: {}", what, std::strerror(errno))};
}
}  // namespace

spool::spool(spool&& o) noexcept
    : dir_{std::move(o.dir_)}, fd_{std::exchange(o.fd_, -1)}, size_{std::exchange(o.size_, 0)} {}

spool& spool::operator=(spool&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        dir_ = std::move(o.dir_);
        fd_ = std::exchange(o.fd_, -1);
        size_ = std::exchange(o.size_, 0);
    }
    return *this;
}

spool::~spool() {
    if (fd_ >= 0) ::close(fd_);
}

result<void> spool::append(std::string_view bytes) {
    if (fd_ < 0) {
        std::string dir = dir_;
        if (dir.empty()) {
            const char* t = std::getenv("TMPDIR");
            dir = t && *t ? t : "/tmp";
        }
        std::string path = dir + "/iggy-s3-sink-spool-XXXXXX";
        std::vector<char> buf(path.begin(), path.end());
        buf.push_back('\0');
        fd_ = ::mkstemp(buf.data());
        if (fd_ < 0) return io_error(fmt::format("create in {}", dir));
        ::unlink(buf.data());  // unlinked: a crash leaves nothing behind
    }
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::pwrite(fd_, p, left, static_cast<off_t>(size_));
        if (n < 0) {
            if (errno == EINTR) continue;
            return io_error("write");
        }
        p += n;
        left -= static_cast<std::size_t>(n);
        size_ += static_cast<std::uint64_t>(n);
    }
    return {};
}

spool::mapping::mapping(mapping&& o) noexcept
    : base_{std::exchange(o.base_, nullptr)}, mapped_{std::exchange(o.mapped_, 0)}, view_{std::exchange(o.view_, {})} {}

spool::mapping& spool::mapping::operator=(mapping&& o) noexcept {
    if (this != &o) {
        if (base_) ::munmap(base_, mapped_);
        base_ = std::exchange(o.base_, nullptr);
        mapped_ = std::exchange(o.mapped_, 0);
        view_ = std::exchange(o.view_, {});
    }
    return *this;
}

spool::mapping::~mapping() {
    if (base_) ::munmap(base_, mapped_);
}

result<spool::mapping> spool::map(std::uint64_t offset, std::size_t length) const {
    if (offset + length > size_ || fd_ < 0) return error{iss::errc::io_error, "spool map: beyond the end of the file"};
    mapping m;
    if (length == 0) return m;
    static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t start = offset - offset % page;  // mmap offsets are page-aligned
    const auto skip = static_cast<std::size_t>(offset - start);
    void* p = ::mmap(nullptr, skip + length, PROT_READ, MAP_SHARED | MAP_POPULATE, fd_, static_cast<off_t>(start));
    if (p == MAP_FAILED) return io_error("map");
    m.base_ = p;
    m.mapped_ = skip + length;
    m.view_ = std::string_view{static_cast<const char*>(p) + skip, length};
    return m;
}

void spool::clear() {
    if (fd_ >= 0 && size_ > 0) {
        if (::ftruncate(fd_, 0) != 0) {
            ::close(fd_);  // start over with a new file on the next append
            fd_ = -1;
        }
    }
    size_ = 0;
}

}  // namespace iss::pipeline
