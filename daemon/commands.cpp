#include "daemon/commands.hpp"

#include <array>

namespace iss::app {

// Subcommands arrive with their issues; keep this table sorted as --help shows it.
std::span<const command> commands() {
    static const std::array<command, 0> table{};
    return table;
}

}  // namespace iss::app
