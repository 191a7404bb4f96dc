// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// A byte spool for an object larger than one part: an unlinked temporary file, so memory
/// per open object stays about one part and a crash leaves nothing behind.
///
/// Why a file and not "upload parts while the object grows": S3 fixes an object's user
/// metadata at CreateMultipartUpload, and the delivery contract needs the object's final
/// range (`x-amz-meta-iggy-last-offset`, `-count`) in that metadata (delivery.hpp). The
/// range is only known at rotation, so the upload is created then and the parts are read
/// back from here. Blocking file I/O on the event loop: writes go to the page cache; a part
/// is mapped back (`map`: the page-cache pages themselves, no copy into a buffer of ours)
/// only at rotation.
///
/// Files are reused: when a spool goes (its object uploaded), its file is kept open as a
/// spare, up to `max_spare_files` of them, each cut to `max_spare_bytes`, and the next spool
/// in the same directory writes over it. Writing over page-cache pages costs a copy; a new
/// file costs that plus allocating every page and block and, when the file goes, freeing
/// them again (measured on the benchmark's raw cell: 1.97 -> 1.70 CPU-s/GB). Only the spool's
/// own bytes (`size`) are ever mapped, never a previous object's tail. A spool in use is
/// charged its file's length (`disk_bytes`) against memory.max_spool; the spares are not:
/// at most max_spare_files x max_spare_bytes on disk. The writer passes a `reuse_limit` of
/// a sixteenth of max_spool, so a reused file never takes a small budget by surprise.

#include "common/error.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace iss::pipeline {

class spool {
public:
    /// Spare files kept for the next spools, and the bytes each may keep.
    static constexpr std::size_t max_spare_files = 4;
    static constexpr std::uint64_t max_spare_bytes = std::uint64_t{64} << 20;
    /// `dir`: where the temporary file goes (empty: $TMPDIR or /tmp). Nothing is created
    /// until the first `append`, which takes a spare file of `dir` no longer than
    /// `reuse_limit` bytes when there is one.
    explicit spool(std::string dir = {}, std::uint64_t reuse_limit = max_spare_bytes)
        : dir_{std::move(dir)}, reuse_limit_{reuse_limit} {}
    spool(const spool&) = delete;
    spool& operator=(const spool&) = delete;
    spool(spool&& o) noexcept;
    spool& operator=(spool&& o) noexcept;
    ~spool();

    /// Appends `bytes`. On failure (then `size` is as before the call) the error names the
    /// file operation and carries the system's code (errno, boost::system::system_category:
    /// ENOSPC, EROFS, ENOENT when the directory is gone ...; spool_error_reason_of in
    /// health.hpp sorts them).
    result<void> append(std::string_view bytes);
    /// `length` bytes at `offset`, mapped read-only: the spool file's page-cache pages, so a
    /// part goes to the socket without being copied into a buffer first, and without an
    /// anonymous buffer to fault in. Mapped ahead of the reader `populate_window` bytes at a
    /// time (the first window at once, the next ones by `release`), so a part being sent
    /// holds about a window of the process's memory (RSS; the kernel maps page-cache folios
    /// whole, so a few MiB), not the whole part. Unmapped when
    /// the mapping goes. The spool must not be cleared or appended to below `offset + length`
    /// meanwhile.
    class mapping {
    public:
        mapping() noexcept = default;
        mapping(mapping&& o) noexcept;
        mapping& operator=(mapping&& o) noexcept;
        mapping(const mapping&) = delete;
        mapping& operator=(const mapping&) = delete;
        ~mapping();
        /// The bytes asked for.
        [[nodiscard]] std::string_view bytes() const noexcept { return view_; }
        /// `stretch` (a piece of `bytes()`) has been sent: its pages leave the process
        /// (madvise MADV_DONTNEED; the bytes stay readable: read again, they come back from
        /// the page cache) and the next window after it is mapped in one step
        /// (MADV_POPULATE_READ, Linux 5.14; without it the reads fault the pages in).
        /// Anything outside `bytes()` is ignored.
        void release(std::string_view stretch) noexcept;

        /// Bytes mapped ahead of the reader.
        static constexpr std::size_t populate_window = std::size_t{1} << 20;

    private:
        friend class spool;
        void populate(std::size_t upto) noexcept;
        void* base_ = nullptr;  // page-aligned start of the mapped range
        std::size_t mapped_ = 0;
        std::size_t populated_ = 0;  // bytes from base_ mapped ahead so far
        std::string_view view_;
    };
    /// errc::io_error naming the operation when the range is not in the file or mmap fails.
    [[nodiscard]] result<mapping> map(std::uint64_t offset, std::size_t length) const;
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
    /// The file's length on disk: `size`, or more while a reused file is longer (what
    /// memory.max_spool is charged).
    [[nodiscard]] std::uint64_t disk_bytes() const noexcept { return std::max(length_, size_); }
    /// Forgets the content; the file stays, and the next appends write over it.
    void clear();

    /// The directory spool files of `dir` go to: `dir`, or $TMPDIR, or /tmp.
    [[nodiscard]] static std::string directory(const std::string& dir);
    /// Whether a spool of `dir` can take `need` more bytes in a new file: the directory
    /// exists (else ENOENT), is on a writable file system and writable by this process
    /// (EROFS, EACCES), and has at least `need` bytes free for unprivileged use (ENOSPC).
    /// The error carries that system code, like `append`'s. statvfs(3) and access(2): no
    /// file is made.
    [[nodiscard]] static result<void> check_directory(const std::string& dir, std::uint64_t need);

    struct spares_info {
        std::size_t files = 0;
        std::uint64_t bytes = 0;  ///< their lengths on disk
    };
    /// The spare files kept now (process-wide).
    [[nodiscard]] static spares_info spares() noexcept;

private:
    void release() noexcept;  // the file to the spares (or closed); empty again

    std::string dir_;
    std::uint64_t reuse_limit_ = max_spare_bytes;
    int fd_ = -1;
    std::uint64_t size_ = 0;    // this spool's bytes
    std::uint64_t length_ = 0;  // the file's length (a reused file may be longer than size_)
};

}  // namespace iss::pipeline
