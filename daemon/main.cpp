// SPDX-License-Identifier: Apache-2.0
// iggy-s3-sink: the daemon's entry point. The command line goes to one parser over every
// subcommand (daemon/cli.cpp).
#include "common/journal.hpp"
#include "common/log.hpp"
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"

#include <fmt/format.h>
#include <malloc.h>
#include <signal.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <span>
#include <string_view>

namespace {

/// The stop signals `run` handles on its event loop (an Asio signal_set, daemon/cmd_run.cpp).
sigset_t stop_signals() {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGHUP);
    return s;
}

/// Until `run` has installed its signal_set, the default action of SIGTERM would kill the
/// process (status -15) however early a supervisor sends it: so the stop signals are blocked
/// before anything else runs (a blocked signal stays pending). `run` unblocks them once its
/// signal_set is in place, and the pending one becomes a clean stop; every other command
/// unblocks them before it starts (their default action is what they want). Threads started
/// later inherit the mask.
void block_stop_signals() {
    const sigset_t s = stop_signals();
    sigprocmask(SIG_BLOCK, &s, nullptr);
}

void unblock_stop_signals() {
    const sigset_t s = stop_signals();
    sigprocmask(SIG_UNBLOCK, &s, nullptr);
}

/// Runs before any constructor of the program or of its libraries (ELF .preinit_array, which
/// the dynamic loader calls first), so a signal that arrives while they run, or when main()
/// starts, is held too; main() blocks again first thing (a no-op then). What remains
/// unprotected is the loader mapping the libraries, and a signal pending before the kernel
/// first runs the program kills it before its first instruction: only the parent can close
/// that (the mask is inherited over exec).
[[gnu::used, gnu::section(".preinit_array")]] void (*block_stop_signals_early)() = &block_stop_signals;

}  // namespace

int main(int argc, char** argv) try {
    // glibc's malloc raises its mmap threshold to the size of each large block freed (up to
    // 32 MiB), after which object buffers and poll replies come from the heap, where freed
    // blocks fragment and stay resident: measured on the 200-partition backlog with
    // memory.max_buffered 64 MiB, peak RSS 118 MiB with the default, 86 MiB with a fixed
    // threshold. Blocks of 128 KiB and more are mapped and unmapped on their own, so RSS
    // follows the budget. (mallopt(3): a fixed M_MMAP_THRESHOLD turns the adjustment off.)
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    block_stop_signals();
    // Under systemd with stderr on the journal, every line carries its priority (<3> error).
    iss::log::use_priority_prefixes(iss::log::stderr_is_journal());
    const std::span<const char* const> args{argv + (argc > 0 ? 1 : 0),
                                            static_cast<std::size_t>(argc > 0 ? argc - 1 : 0)};
    if (args.empty() || std::string_view{args.front()} != "run") unblock_stop_signals();
    return iss::app::run_command_line(args);
} catch (const std::exception& e) {
    iss::app::print_error("", "fatal: {}", e.what());
    return iss::app::exit_failure;
}
