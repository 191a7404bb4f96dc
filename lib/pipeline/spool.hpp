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
/// is read back only at rotation.

#include "common/error.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace iss::pipeline {

class spool {
public:
    /// `dir`: where the temporary file goes (empty: $TMPDIR or /tmp). Nothing is created
    /// until the first `append`.
    explicit spool(std::string dir = {}) : dir_{std::move(dir)} {}
    spool(const spool&) = delete;
    spool& operator=(const spool&) = delete;
    spool(spool&& o) noexcept;
    spool& operator=(spool&& o) noexcept;
    ~spool();

    /// Appends `bytes`; errc::io_error naming the file operation on failure.
    result<void> append(std::string_view bytes);
    /// Reads exactly `out.size()` bytes at `offset` into `out` (memory the caller owns and
    /// need not initialise: no zero-fill pass over a part).
    result<void> read(std::uint64_t offset, std::span<char> out) const;
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
    /// Forgets the content (truncates the file).
    void clear();

private:
    std::string dir_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
};

}  // namespace iss::pipeline
