// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Log lines on the journal (implemented in log.cpp): when systemd connects stderr to
/// journald, each line may start with its syslog priority, `<3>` for an error, which journald
/// strips and files the line under (sd-daemon(3), "<N>" prefixes). `journalctl -p err` then
/// shows the errors. Off by default; the daemon turns it on when stderr is the journal stream.

#include "common/log.hpp"

#include <cstdint>
#include <string_view>

namespace iss::log {

/// The sd-daemon(3) priority of a level (syslog's numbers): error 3, warn 4, info 6, debug
/// and trace 7.
[[nodiscard]] int priority(level l) noexcept;

/// Whether `journal_stream` (the value of `JOURNAL_STREAM`, "DEVICE:INODE" in decimal, which
/// systemd sets when it connects stdout or stderr to the journal) names the file with
/// `device` and `inode`. systemd.exec(5) says to compare it with stderr's own before relying
/// on it: a child whose stderr was redirected inherits the variable.
[[nodiscard]] bool journal_stream_matches(std::string_view journal_stream, std::uint64_t device,
                                          std::uint64_t inode) noexcept;

/// Whether this process's stderr is the journal stream (`JOURNAL_STREAM` matches fstat(2)
/// of file descriptor 2).
[[nodiscard]] bool stderr_is_journal() noexcept;

/// Turns the `<N>` prefix on every logger line on or off (thread-safe).
void use_priority_prefixes(bool on);

/// The prefix for a line at `l` written to stderr without a logger ("<3>" while prefixes are
/// on, else empty): for the command-line tools' own messages.
[[nodiscard]] std::string_view stderr_prefix(level l) noexcept;

/// The one path for a command-line tool's own messages on stderr (those that are not a
/// logger's lines): writes `text` (one line or several, with or without a final newline),
/// each line led by `stderr_prefix(l)`, so that on the journal every line is filed under its
/// priority as the loggers' lines are. Flushes stdout first (a report printed before an error
/// stays before it), and stderr after.
void print_stderr(level l, std::string_view text);

}  // namespace iss::log
