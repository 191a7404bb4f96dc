// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Maps the configuration (config::sink_config) to each module's own options, once, for the
/// subcommands that connect (run, lag, verify): iggy, format and pipeline here, s3 and the
/// credentials chain in daemon/s3_wiring.hpp. One function per options struct; the
/// subcommands only compose them. Pure: no I/O.

#include "config/config.hpp"
#include "format/writer.hpp"
#include "iceberg/catalog.hpp"
#include "iggy/client.hpp"
#include "pipeline/adapters/iggy_ports.hpp"
#include "pipeline/adapters/key_namer.hpp"
#include "pipeline/consumer.hpp"
#include "pipeline/delivery.hpp"
#include "pipeline/memory.hpp"
#include "pipeline/rotation.hpp"

#include <memory>
#include <span>
#include <string_view>

namespace iss::app {

/// `iggy.*` -> iggy::client_options (address "host:port", IPv6 as "[::1]:8090").
[[nodiscard]] result<iggy::client_options> iggy_options(const config::sink_config& c);
/// `format.*` -> format::writer_options (the typed formats' columns from `format.schema`,
/// which `config::validate` has checked).
[[nodiscard]] format::writer_options writer_options(const config::sink_config& c);
/// The columns a typed format writes, one line each (`name type from [nullable]`), for
/// check-config; empty for the JSON and raw formats.
[[nodiscard]] std::string describe_schema(const config::sink_config& c);
/// `rotation.*` -> pipeline::rotation_options.
[[nodiscard]] pipeline::rotation_options rotation_options(const config::sink_config& c);
/// `sources` + `iggy.poll` + mode -> pipeline::consumer_options.
[[nodiscard]] pipeline::consumer_options consumer_options(const config::sink_config& c);
/// The consumer's name: the group (group mode) or `iggy.consumer`.
[[nodiscard]] std::string consumer_name(const config::sink_config& c);
/// Group mode when `iggy.consumer_group` is set, else single-consumer mode.
[[nodiscard]] pipeline::consumer_mode consumer_mode(const config::sink_config& c);
/// `s3.conditional_writes` -> what `pipeline::plan_delivery` may assume of the store.
[[nodiscard]] pipeline::conditional_writes conditional_writes(const config::sink_config& c);
/// `s3.part_size`, `s3.retry` (backoff), `delivery.on_bad_message`, `rotation.max_open_objects`
/// and the mode, with the plan `pipeline::plan_delivery` made from the probe ->
/// pipeline::writer_options.
[[nodiscard]] pipeline::writer_options delivery_options(const config::sink_config& c, pipeline::delivery_plan plan);
/// `naming.*` and `s3.prefix` -> the key namer of `run` for objects with extension `ext`
/// (pipeline::template_key_namer: naming.key, naming.time_source, naming.timezone,
/// naming.missing_value), checked with pipeline::check_key_namer. The error names the key.
[[nodiscard]] result<std::unique_ptr<pipeline::template_key_namer>> key_namer(const config::sink_config& c,
                                                                              std::string ext);
/// `memory.max_buffered`, `memory.max_spool` -> pipeline::memory_limits (bytes).
[[nodiscard]] pipeline::memory_limits memory_limits(const config::sink_config& c);
/// Mode, consumer name, `iggy.verify_checksum`, `delivery.dead_letter` -> the Iggy adapter's options.
[[nodiscard]] pipeline::iggy_ports_options iggy_ports_options(const config::sink_config& c);

/// `iceberg.catalog.*` -> the REST catalog client's options (lib/iceberg/catalog.hpp). With
/// `auth.type: sigv4` requests are signed with `credentials` (the S3 client's credential
/// chain) for `auth.signing_name` in `auth.signing_region`, or `s3.region` when that is empty.
[[nodiscard]] iceberg::catalog_options catalog_options(const config::sink_config& c,
                                                       std::shared_ptr<aws::credentials_source> credentials);
/// The Iceberg table a source partition's records go to: `iceberg.namespace` split at its dots,
/// `iceberg.table` with `{stream}` and `{topic}` rendered (lib/iceberg/names.hpp).
[[nodiscard]] iceberg::table_ident iceberg_table(const config::sink_config& c, const pipeline::partition_ref& p);

/// Builds what `run`'s generation builds from `c` without a connection (the Iggy client
/// options, the rotation policy, the format's encoders and the key namer) and returns the
/// first refusal, "KEY: what is wrong". config::check applies the same rules first; a reload
/// (daemon/service.cpp) calls this too, so a file it accepts never ends a running pipeline
/// only to be refused by the next one.
[[nodiscard]] result<void> check_buildable(const config::sink_config& c);

/// Loads and checks a config file for a subcommand named `cmd`; prints every problem and
/// returns nullopt (the caller exits 78).
[[nodiscard]] std::optional<config::sink_config> load_config_or_report(std::string_view cmd, const std::string& file);

}  // namespace iss::app
