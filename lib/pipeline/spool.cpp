#include "pipeline/spool.hpp"

#include <fcntl.h>
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

result<void> spool::read(std::uint64_t offset, std::span<char> out) const {
    const std::size_t n = out.size();
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = ::pread(fd_, out.data() + got, n - got, static_cast<off_t>(offset + got));
        if (r < 0) {
            if (errno == EINTR) continue;
            return io_error("read");
        }
        if (r == 0) return error{iss::errc::io_error, "spool read: file shorter than expected"};
        got += static_cast<std::size_t>(r);
    }
    return {};
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
