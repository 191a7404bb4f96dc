// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `run`'s Iggy and S3 clients, kept across configuration reloads (SIGHUP) while their own
/// settings stay the same (docs/operations.md, "Reloading the configuration").
///
/// Naive version first: a reload ends the whole pipeline as a clean stop does and starts it
/// again with new clients. The pipeline must indeed drain (open objects uploaded, offsets
/// committed) so that the next one starts exactly where this one committed; but the new Iggy
/// connection is a new consumer-group member: the old one leaves, the new one joins, and every
/// other member of the group sees two rebalances for a change of, say, `rotation.max_records`.
/// A new S3 client also probes the store again and fetches credentials again.
///
/// So the clients live here, outside the pipeline's generation (daemon/cmd_run.cpp, `serve`):
/// - the Iggy client is kept while `iggy` is unchanged (config::changed_sections), with the
///   groups the drained consumer loop stayed in (`consumer_loop::shutdown(false)`); the next
///   loop takes them over (`consumer_loop::take_over`) without a join. Groups of topics the new
///   `sources` no longer name are left. A changed `iggy` section leaves every kept group and
///   closes the connection; a new client connects and the new loop joins (a rebalance, as the
///   change asks for: another address, user, group or poll setting);
/// - the S3 setup (client, credentials, the probe's findings) is kept while `s3` is unchanged.
/// Before a client goes, its counters are carried (admin::carried_totals), so the process's
/// counters never go down. The run_state pointers to the clients are set and cleared here,
/// with no suspension between a carry and the pointer's clearing.
///
/// Event-loop thread only; lives in `serve`'s frame, so it outlives every generation.

#include "config/config.hpp"
#include "daemon/s3_setup.hpp"
#include "daemon/service.hpp"
#include "iggy/client.hpp"
#include "pipeline/types.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <set>

namespace iss::app {

class run_clients {
public:
    explicit run_clients(run_state& st) : st_{st} {}
    ~run_clients();
    run_clients(const run_clients&) = delete;
    run_clients& operator=(const run_clients&) = delete;

    /// The object store for `cfg`: the one in hand when `cfg.s3` is the section it was made
    /// for, else a new one (the old one's counters carried), built and probed by make_s3. An
    /// unreachable store (errc::timeout) is waited for with backoff until it answers or a stop
    /// or reload ends the generation (`st.ending()`); refused credentials or a missing bucket
    /// are returned at once. Sets `st.s3` and `st.store_usable`.
    boost::asio::awaitable<result<const s3_setup*>> store(const config::sink_config& cfg, pipeline::sleeper& sleeper);

    /// A store a reload built and probed for `section` before draining (daemon/service.cpp):
    /// the next `store` call for that section takes it instead of probing again; any other
    /// section drops it.
    void stage_store(config::s3_section section, s3_setup s);

    /// The Iggy client for `cfg`: the one in hand when `cfg.iggy` is the section it was made
    /// for (the kept groups of topics that `cfg.sources` no longer names are left first), else
    /// a new one, connected, after every kept group was left and the old client closed (its
    /// counters carried). A connect that fails is returned (the client stays, unconnected, for
    /// `st`'s readiness and stop decisions). Sets `st.client`.
    boost::asio::awaitable<result<iggy::client*>> iggy(const config::sink_config& cfg, iggy::client_options o);

    /// The groups a drained consumer loop stayed in, for the next loop on this client to take
    /// over (consumer_loop::take_over); empty after `iggy` used them up or left them.
    std::set<pipeline::topic_ref> kept_groups;

    /// Drops the Iggy client without leaving its groups (a generation cancelled while the
    /// client was connecting: its state is unknown; the server drops the member with the
    /// connection).
    void drop_iggy();
    /// The end of `run`: leaves the kept groups and closes the Iggy connection.
    boost::asio::awaitable<void> close();

private:
    /// Leaves the kept groups not in `keep` (all of them when empty) on the current client.
    boost::asio::awaitable<void> leave_kept(const std::set<pipeline::topic_ref>& keep);
    void drop_s3();

    run_state& st_;
    std::unique_ptr<iggy::client> iggy_;
    std::optional<config::sink_config> iggy_for_;  ///< the configuration `iggy_` was made for (its `iggy` counts)
    std::optional<s3_setup> s3_;
    std::optional<config::s3_section> s3_for_;  ///< the section `s3_` was made for
    std::optional<s3_setup> staged_;            ///< stage_store's, until `store` takes or drops it
    std::optional<config::s3_section> staged_for_;
};

}  // namespace iss::app
