// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Thin adapters from the pipeline's Iggy ports (ports.hpp) to `iggy::client`: polls with
/// `auto_commit = 0` and an explicit partition and offset, stores offsets with an explicit
/// partition, joins/leaves the group, sends dead letters. Each call is the one place where
/// the client's errors become port outcomes (docs/architecture.md §8.4.4):
/// 3022/5006 -> not_owner/not_member; transport, 8, 30 -> retryable; the rest -> fatal.

#include "common/log.hpp"
#include "iggy/client.hpp"
#include "pipeline/ports.hpp"

#include <memory>
#include <string>
#include <vector>

namespace iss::pipeline {

/// A polled message as the pipeline sees it: views into the same bytes, `view` pointing at `v`
/// (valid while the bytes and `v` are).
[[nodiscard]] message message_of(const proto::message_view& v);

struct iggy_ports_options {
    bool group_mode = true;
    std::string consumer_name;    ///< the group's name (group mode) or the single consumer's name
    bool verify_checksum = true;  ///< a checksum mismatch makes the message bad (the encoder checks `message::view`)
    topic_ref dead_letter;        ///< empty stream: no dead-letter topic
};

/// The Iggy side of the pipeline over one client. The client outlives this object; both run
/// on the same executor.
class iggy_ports final : public message_source, public offset_store, public dead_letter_sink {
public:
    iggy_ports(iggy::client& c, iggy_ports_options o);

    task<poll_result> poll(const topic_ref& t, std::optional<std::uint32_t> partition,
                           std::optional<std::uint64_t> from, std::uint32_t count) override;
    task<source_status> join(const topic_ref& t) override;
    task<source_status> leave(const topic_ref& t) override;
    task<partitions_result> partitions(const topic_ref& t) override;
    [[nodiscard]] std::uint64_t session() const override;

    task<offset_result> store_offset(const partition_ref& p, std::uint64_t offset) override;
    task<offset_result> load_offset(const partition_ref& p) override;

    task<source_status> send(const message& m, const partition_ref& source, std::string reason) override;

private:
    [[nodiscard]] proto::consumer consumer() const;
    iggy::client& c_;
    iggy_ports_options o_;
    std::vector<message> messages_;  ///< reused per poll
    iss::log::logger log_{"iggy"};
};

/// The port outcome for an Iggy error (exposed for tests).
[[nodiscard]] source_status source_status_of(const iss::error& e) noexcept;
[[nodiscard]] offset_status offset_status_of(const iss::error& e) noexcept;

}  // namespace iss::pipeline
