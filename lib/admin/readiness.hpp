// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `GET /readyz` and systemd's READY=1: the daemon is ready when Iggy is connected and logged
/// in, the store was probed usable, and (consumer-group mode) the group is joined. This file
/// turns those facts into the lines /readyz answers, one per unmet condition.

#include <string>
#include <vector>

namespace iss::s3 {
struct client_stats;
}  // namespace iss::s3

namespace iss::pipeline {
class consumer_loop;
class delivery_health;
struct iceberg_table_stats;
}  // namespace iss::pipeline

namespace iss::admin {

/// The facts readiness is made of, as the daemon knows them at the moment of the question.
struct readiness_inputs {
    bool store_usable = false;    ///< the start-up probe of the bucket succeeded
    bool iggy_connected = false;  ///< connected and logged in (iggy::client::connected)
    bool group_mode = false;      ///< iggy.consumer_group is set
    bool group_joined = false;    ///< every configured topic's group joined (consumer_loop::joined)
    bool stopping = false;        ///< a stop signal arrived
    /// Sources that cannot be read, one line each without the `iggy: ` lead (source_problems).
    std::vector<std::string> source_problems;
    /// The store refusing writes and the spool failing, one line each, with their `store: ` /
    /// `spool: ` lead (delivery_problems).
    std::vector<std::string> delivery_problems;
    /// A reload (SIGHUP) drains the running pipeline before the new configuration starts. Not an
    /// unmet condition: a reload must not make an orchestrator unroute or restart the daemon
    /// (it uploads and commits what it holds, as a stop does, and carries on), so /readyz stays
    /// 200 and says so (`readiness_notes`). What the drain or the next configuration really
    /// lacks (Iggy, the group, the store) is still reported as unmet.
    bool reloading = false;
};

/// The delivery faults the writers met (pipeline/health.hpp), one line each (for
/// readiness_inputs::delivery_problems): `store: refusing writes: CODE: DETAIL ...` while the
/// store refuses, `spool: REASON: DETAIL ...` while the spool directory fails.
[[nodiscard]] std::vector<std::string> delivery_problems(const pipeline::delivery_health& h);

/// The Iceberg catalog unreachable by the table step's last attempt (for
/// readiness_inputs::delivery_problems): `catalog: unreachable: HOST: ERROR; ...`; none
/// without `iceberg` (`st` null) or while it answers.
[[nodiscard]] std::vector<std::string> catalog_problems(const pipeline::iceberg_table_stats* st);

/// The store's reachability (s3::client_stats::unreachable), for
/// readiness_inputs::delivery_problems: `store: unreachable: REASON: DETAIL ...` while the last
/// request to the store got no answer (a silent network, a name that does not resolve, a
/// certificate that does not verify), else nothing.
[[nodiscard]] std::vector<std::string> store_problems(const s3::client_stats& st);

/// The consumer's source faults, one line each (for readiness_inputs::source_problems): each
/// source that cannot be read (`source unavailable: STREAM/TOPIC[ partition N]: reason`) and
/// each partition stopped by an offset reset (`offset reset: STREAM/TOPIC partition N: ...`).
[[nodiscard]] std::vector<std::string> source_problems(const pipeline::consumer_loop& c);

/// The lines /readyz adds below `ready` while ready: `reloading: ...` while a reload drains.
[[nodiscard]] std::vector<std::string> readiness_notes(const readiness_inputs& in);

/// One line per unmet condition, in a fixed order (store probe, each delivery problem, iggy,
/// group, each source problem, stopping); empty when ready.
[[nodiscard]] std::vector<std::string> unmet_conditions(const readiness_inputs& in);

}  // namespace iss::admin
