// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The daemon's configuration: one YAML file -> `sink_config`, plain structs that mirror the
/// YAML schema (docs/architecture.md §8.6). The daemon maps these sections to each module's own
/// `*_options` struct; no module reads this struct itself. A choice (`format.type`,
/// `s3.sse.type`, ...) is held as the module's own enum, which the schema's choice table names
/// (`schema.hpp`), so the daemon copies it across without a mapping of its own.
///
/// Loading (`parse`, `load_file`) and checking (`validate`) are separate and pure: both
/// collect *every* problem, each with its YAML path (`rotation.max_records: must be > 0`),
/// and neither opens a socket. `parse` reports what the YAML says wrongly (syntax, unknown or
/// duplicate keys, a value of the wrong type, an unset `${VAR}`); `validate` reports what a
/// well-typed config gets wrong (limits, combinations, the key template's rules).
///
/// Values:
/// - `${VAR}` and `${VAR:-default}` are replaced in every scalar before it is read, from an
///   injectable environment (`env_lookup`). An unset VAR without a default is an error that
///   names it; `:-` also applies when VAR is set but empty (shell semantics). `$${` is a
///   literal `${`. The replaced text is not parsed as YAML again.
/// - sizes: `8MiB`, `8MB`, `512KiB`, `1.5GiB`, plain bytes (`8388608`); units are B, KB, MB,
///   GB, TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024), case-insensitive.
/// - durations: `250ms`, `10s`, `10m`, `1h`, `1d`, and sums such as `1h30m`; a bare `0` is
///   allowed, any other bare number is an error (seconds or milliseconds?).
/// - booleans: true/false (also yes/no, on/off).
///
/// Secrets (`iggy.password`, `iggy.token`, `s3.secret_access_key`, `s3.session_token`,
/// `iceberg.catalog.auth.token`, `iceberg.catalog.auth.client_secret`) are
/// `iss::secret` values: `to_yaml` and every formatter print them as `****`.

#include "aws/source_kind.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/types.hpp"
#include "format/compressor.hpp"
#include "format/table.hpp"
#include "format/writer.hpp"
#include "iceberg/catalog_protocol.hpp"
#include "pipeline/types.hpp"
#include "proto/negotiation.hpp"
#include "s3/checksum.hpp"
#include "s3/request.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace iss::config {

using std::chrono::milliseconds;

inline constexpr std::uint64_t kib = 1024;
inline constexpr std::uint64_t mib = 1024 * kib;
inline constexpr std::uint64_t gib = 1024 * mib;

/// `iggy.tls`
struct iggy_tls_section {
    bool enabled = false;     ///< TLS to the Iggy server (default false)
    std::string ca_file;      ///< PEM CA bundle; empty: the system's trust store
    std::string server_name;  ///< name checked in the certificate; empty: the address's host
    friend bool operator==(const iggy_tls_section&, const iggy_tls_section&) = default;
};

/// `iggy.poll`
struct poll_section {
    std::uint32_t messages = 1000;         ///< messages per poll request (default 1000)
    milliseconds interval{100};            ///< wait after an empty poll (default 100 ms)
    milliseconds max_idle_interval{2000};  ///< longest wait between polls of a partition that stays empty
    friend bool operator==(const poll_section&, const poll_section&) = default;
};

/// `iggy`: the connection and the consumer.
struct iggy_section {
    std::string address = "127.0.0.1:8090";  ///< host:port of the TCP listener
    std::string username = "iggy";           ///< user for password login
    iggy_password password;                  ///< default: env IGGY_PASSWORD when set
    iggy_token token;                        ///< personal access token (instead of a password)
    iggy_tls_section tls;
    std::string consumer_group = "s3-sink";  ///< consumer group name (group mode)
    std::string consumer;                    ///< non-empty: single consumer with this name
    poll_section poll;
    bool verify_checksum = true;                                      ///< check each message's XXH3 checksum
    std::uint64_t max_response_bytes = 64 * mib;                      ///< largest poll reply accepted (bytes)
    proto::wire_protocol protocol = proto::wire_protocol::automatic;  ///< the Iggy wire protocol
    pipeline::offset_reset_policy on_offset_reset = pipeline::offset_reset_policy::fail;  ///< a topic created again

    /// True in consumer-group mode (no `consumer:` given).
    [[nodiscard]] bool group_mode() const noexcept { return consumer.empty(); }
    friend bool operator==(const iggy_section&, const iggy_section&) = default;
};

/// One entry of `sources`: a stream, its topics, and which partitions.
struct source_section {
    std::string stream;                     ///< stream name
    std::vector<std::string> topics;        ///< topic names (a scalar is one topic)
    bool all_partitions = true;             ///< `partitions: all` (default)
    std::vector<std::uint32_t> partitions;  ///< explicit ids when !all_partitions (from 0)
    friend bool operator==(const source_section&, const source_section&) = default;
};

struct s3_tls_section {
    std::string ca_file;    ///< PEM CA bundle for a private endpoint; empty: system store
    bool insecure = false;  ///< skip certificate verification (testing only)
    friend bool operator==(const s3_tls_section&, const s3_tls_section&) = default;
};

struct s3_timeouts_section {
    milliseconds connect{5'000};   ///< TCP connect + TLS handshake
    milliseconds request{10'000};  ///< one request: send and full response
    friend bool operator==(const s3_timeouts_section&, const s3_timeouts_section&) = default;
};

struct s3_retry_section {
    std::uint32_t attempts = 10;    ///< attempts per operation (>= 1)
    milliseconds base{200};         ///< first backoff ceiling
    milliseconds cap{5'000};        ///< largest backoff ceiling
    milliseconds deadline{15'000};  ///< bound on one operation with its retries; 0: none (single consumer only)
    friend bool operator==(const s3_retry_section&, const s3_retry_section&) = default;
};

struct s3_credentials_section {
    aws::source_kind source = aws::source_kind::automatic;  ///< the chain, or one step of it pinned
    friend bool operator==(const s3_credentials_section&, const s3_credentials_section&) = default;
};

/// `s3.assume_role`: STS AssumeRole over the base credentials (empty role_arn: none).
struct s3_assume_role_section {
    std::string role_arn;
    std::string session_name;          ///< empty: iggy-s3-sink-<unix time>
    std::string external_id;           ///< empty: not sent
    milliseconds duration{3'600'000};  ///< 15m .. 12h, whole seconds
    friend bool operator==(const s3_assume_role_section&, const s3_assume_role_section&) = default;
};

/// `s3.sse`: server-side encryption of every object.
struct s3_sse_section {
    s3::sse_type type = s3::sse_type::none;
    std::string kms_key_id;
    std::string kms_context;  ///< JSON object
    bool bucket_key_enabled = false;
    iss::sse_customer_key customer_key;  ///< type customer: 32 bytes, base64 (secret)
    friend bool operator==(const s3_sse_section&, const s3_sse_section&) = default;
};

/// `s3`: where and how objects are written.
struct s3_section {
    bucket_name bucket;
    region_name region{"us-east-1"};
    std::string endpoint;  ///< empty: AWS; else http(s)://host[:port]
    /// `auto` (virtual-hosted for AWS, path style for a custom endpoint or a bucket name with
    /// dots), `true` (path style), `false` (virtual-hosted).
    s3::addressing path_style = s3::addressing::automatic;
    std::string prefix = "iggy";               ///< `{prefix}` in naming.key
    iss::access_key_id access_key_id;          ///< default: env AWS_ACCESS_KEY_ID
    iss::secret_access_key secret_access_key;  ///< default: env AWS_SECRET_ACCESS_KEY
    iss::session_token session_token;          ///< default: env AWS_SESSION_TOKEN
    s3_tls_section tls;
    std::uint64_t part_size = 8 * mib;  ///< multipart part size, 5 MiB .. 5 GiB
    /// The one checksum sent with each upload request; nullopt (`auto`): CRC-32C where the
    /// start-up probe shows the store verifies it, else Content-MD5 (daemon/s3_setup.cpp).
    std::optional<s3::checksum_kind> checksum;
    /// SigV4 payload signing; nullopt (`auto`): UNSIGNED-PAYLOAD over https, signed over plain
    /// http or with `checksum: none` (daemon/s3_wiring.cpp).
    std::optional<s3::payload_signing> payload_signing;
    /// Conditional writes (`If-None-Match: *`): probed at start (`auto`), required (refuse to
    /// start without them), or not used (`off`).
    pipeline::conditional_writes conditional_writes = pipeline::conditional_writes::auto_detect;
    s3_timeouts_section timeouts;
    s3_retry_section retry;
    s3_credentials_section credentials;
    s3_assume_role_section assume_role;
    std::string sts_endpoint;  ///< empty: AWS_ENDPOINT_URL_STS, else https://sts.<region>.amazonaws.com
    iss::proxy_url proxy;      ///< empty: HTTPS_PROXY / HTTP_PROXY / NO_PROXY
    s3_sse_section sse;
    std::string storage_class;                                 ///< empty: the bucket's default
    std::string acl;                                           ///< canned ACL; empty: not sent
    std::map<std::string, std::string, std::less<>> tags;      ///< x-amz-tagging on every object
    std::map<std::string, std::string, std::less<>> metadata;  ///< extra x-amz-meta-* on every object
    /// Not a key: true when the loader took s3.access_key_id and friends from AWS_* variables
    /// (so the credentials chain reports them as `env`, not `static`).
    bool keys_from_env = false;
    friend bool operator==(const s3_section&, const s3_section&) = default;
};

/// One entry of `format.schema`: a typed column (format/schema.hpp gives the rules).
struct schema_column_section {
    std::string name;
    std::string type;  ///< string, int32, int64, float, double, boolean, timestamp_ms, timestamp_us, date, binary, json
    std::string from;  ///< payload:PATH, payload:., header:NAME, or an envelope field
    bool nullable = true;  ///< false: a missing value is a bad message
    friend bool operator==(const schema_column_section&, const schema_column_section&) = default;
};

/// `format.parquet`
struct parquet_section {
    format::parquet_codec compression = format::parquet_codec::snappy;  ///< each page, inside the file
    std::uint64_t row_group_size = 64 * mib;  ///< uncompressed bytes per row group (memory per open object)
    friend bool operator==(const parquet_section&, const parquet_section&) = default;
};

/// `format.csv`
struct csv_section {
    std::string delimiter = ",";  ///< one character
    std::string null;             ///< how a null is written (default empty)
    friend bool operator==(const csv_section&, const csv_section&) = default;
};

/// `format.avro`
struct avro_section {
    format::avro_codec codec = format::avro_codec::null;  ///< each block, inside the file
    friend bool operator==(const avro_section&, const avro_section&) = default;
};

/// `format`: the records inside each object.
struct format_section {
    format::record_format type = format::record_format::json_lines;
    format::compression compression = format::compression::none;     ///< of the whole object
    bool metadata = true;                                            ///< envelope fields besides payload (JSON types)
    bool headers = true;                                             ///< the `headers` object (JSON types)
    format::payload_mode payload = format::payload_mode::automatic;  ///< how a payload goes into the JSON envelope
    std::string separator = "\n";                                    ///< between payloads (raw only); may be empty
    std::uint32_t compression_level = 0;        ///< 0: codec default (gzip 6, zstd 3); gzip 1..9, zstd 1..19
    std::vector<schema_column_section> schema;  ///< typed formats; empty: the envelope schema
    parquet_section parquet;
    csv_section csv;
    avro_section avro;
    friend bool operator==(const format_section&, const format_section&) = default;
};

/// `rotation`: an object is closed when ANY trigger fires; 0 disables a time trigger.
struct rotation_section {
    std::uint64_t max_records = 10'000;
    std::uint64_t max_bytes = 64 * mib;   ///< of the object as uploaded (after compression)
    milliseconds max_span{10 * 60'000};   ///< message-timestamp span from the first message
    milliseconds schedule{60 * 60'000};   ///< wall-clock boundaries aligned in `timezone`
    std::string timezone = "UTC";         ///< IANA name for `schedule`
    milliseconds idle{60'000};            ///< no new message for this long
    std::uint32_t max_open_objects = 32;  ///< open objects (encoded partitions) per partition
    friend bool operator==(const rotation_section&, const rotation_section&) = default;
};

/// `memory`: the daemon-wide budget of what is held for data not yet durable
/// (lib/pipeline/memory.hpp).
struct memory_section {
    std::uint64_t max_buffered = 256 * mib;  ///< open objects' buffers and poll batches, in memory
    std::uint64_t max_spool = 4 * gib;       ///< spool files (object bytes beyond one part)
    std::string spool_dir;                   ///< where spool files go; empty: $TMPDIR, else /tmp
    friend bool operator==(const memory_section&, const memory_section&) = default;
};

/// `performance`: how the daemon spreads its work over cores.
struct performance_section {
    /// Threads that format and compress records (lib/common/net/worker_pool.hpp); 0: one per
    /// core this process may use; 1: all on the event-loop thread (no pool).
    std::uint32_t workers = 0;
    friend bool operator==(const performance_section&, const performance_section&) = default;
};

struct naming_section {
    /// Key template (format/key_template.hpp).
    std::string key =
        "{prefix}/{stream}/{topic}/partition={partition}/{stream}+{topic}+{partition}+{start_offset:020}.{ext}";
    /// What a record placeholder renders when the message lacks the header or field.
    std::string missing_value = "__HIVE_DEFAULT_PARTITION__";
    /// Record time of the time placeholders: timestamp | origin_timestamp | field:PATH | header:NAME.
    std::string time_source = "timestamp";
    /// IANA zone of the time placeholders.
    std::string timezone = "UTC";
    friend bool operator==(const naming_section&, const naming_section&) = default;
};

struct dead_letter_section {
    std::string stream;
    std::string topic;
    [[nodiscard]] bool empty() const noexcept { return stream.empty() && topic.empty(); }
    friend bool operator==(const dead_letter_section&, const dead_letter_section&) = default;
};

struct delivery_section {
    pipeline::bad_message_policy on_bad_message = pipeline::bad_message_policy::fail;
    dead_letter_section dead_letter;
    friend bool operator==(const delivery_section&, const delivery_section&) = default;
};

struct shutdown_section {
    milliseconds grace{30'000};  ///< time to finish, upload and commit after SIGTERM
    friend bool operator==(const shutdown_section&, const shutdown_section&) = default;
};

struct admin_section {
    /// IP:PORT of the admin HTTP server (/metrics, /healthz, /readyz); empty turns it off.
    std::string listen = "127.0.0.1:9464";
    /// Connections served at once, 1 to 4096; past it the one waiting longest for a request is closed.
    std::uint32_t max_connections = 64;
    friend bool operator==(const admin_section&, const admin_section&) = default;
};

struct log_section {
    log::level level = log::level::info;
    log::output_format format = log::output_format::text;
    friend bool operator==(const log_section&, const log_section&) = default;
};

/// `iceberg.catalog.auth`
struct catalog_auth_section {
    iceberg::auth_kind type = iceberg::auth_kind::none;  ///< how catalog requests are authenticated
    iss::catalog_token token;                            ///< bearer: the token (secret)
    std::string client_id;                               ///< oauth2: client credentials
    iss::oauth2_client_secret client_secret;             ///< oauth2 (secret)
    std::string token_endpoint;                          ///< oauth2: empty: the catalog's `v1/oauth/tokens`
    std::string scope = "catalog";                       ///< oauth2: the scope asked for
    std::string signing_name;                            ///< sigv4: the service name (`s3tables`, `glue`)
    std::string signing_region;                          ///< sigv4: empty: s3.region
    friend bool operator==(const catalog_auth_section&, const catalog_auth_section&) = default;
};

/// `iceberg.catalog`: the Iceberg REST catalog.
struct catalog_section {
    std::string uri;        ///< http(s)://host[:port][/path] of the REST catalog
    std::string warehouse;  ///< the `warehouse` sent to GET v1/config; empty: not sent
    std::string prefix;     ///< path prefix after v1/; empty: the one the catalog's config gives
    catalog_auth_section auth;
    friend bool operator==(const catalog_section&, const catalog_section&) = default;
};

/// `iceberg`: commit the Parquet objects to Iceberg tables (lib/iceberg). Absent: no table.
struct iceberg_section {
    /// Not a key: true when the file has an `iceberg` section.
    bool enabled = false;
    catalog_section catalog;
    std::string namespace_name = "iggy";     ///< `iceberg.namespace` (dots separate levels)
    std::string table = "{stream}_{topic}";  ///< table name; placeholders {stream}, {topic}
    bool create = true;                      ///< create the namespace and table when missing
    std::vector<std::string> partition_by;   ///< Iceberg transforms over format.schema columns
    milliseconds commit_interval{60'000};    ///< durable objects are committed at least this often
    friend bool operator==(const iceberg_section&, const iceberg_section&) = default;
};

/// The whole file. Default-constructed, it holds every default.
struct sink_config {
    iggy_section iggy;
    std::vector<source_section> sources;
    s3_section s3;
    format_section format;
    rotation_section rotation;
    memory_section memory;
    performance_section performance;
    naming_section naming;
    delivery_section delivery;
    shutdown_section shutdown;
    log_section log;
    admin_section admin;
    iceberg_section iceberg;
    friend bool operator==(const sink_config&, const sink_config&) = default;
};

/// One problem: the YAML path (`s3.retry.deadline`, `sources[1].topics`), what is wrong, and
/// the line in the file where known (0: unknown).
struct problem {
    std::string path;
    std::string message;
    int line = 0;
    friend bool operator==(const problem&, const problem&) = default;
};
/// `path: message` (and ` (line N)` when known).
[[nodiscard]] std::string to_string(const problem& p);

/// Looks an environment variable up; nullopt when unset.
using env_lookup = std::function<std::optional<std::string>(std::string_view name)>;
/// The process environment (getenv).
[[nodiscard]] env_lookup process_environment();

/// What `parse` made of a file: the config (defaults where a key is absent or wrong) and
/// every problem found while reading it.
struct loaded {
    sink_config config;
    std::vector<problem> problems;
    std::map<std::string, int> lines;  ///< YAML path -> line, for placing validate()'s problems
    std::set<std::string> set_paths;   ///< paths written in the file (not defaulted)
};

/// Reads YAML text (no I/O). Never throws on bad input.
[[nodiscard]] loaded parse(std::string_view yaml, const env_lookup& env);
/// Reads and parses a file; an unreadable file is a problem with path "" (I/O: the file only).
[[nodiscard]] loaded load_file(const std::string& file, const env_lookup& env);

/// Every rule a well-typed config can break (pure: no I/O besides the time-zone database).
[[nodiscard]] std::vector<problem> validate(const sink_config& c);

/// `parse` then `validate`, with validate()'s problems placed at their lines.
[[nodiscard]] std::vector<problem> check(loaded& l);

/// Settings that are valid but probably not meant (printed by check-config, logged at start;
/// they never fail a start): e.g. a key whose finest time field is finer than the rotation
/// would fill, which makes an object per minute or second.
[[nodiscard]] std::vector<problem> warnings(const sink_config& c);

/// The top-level sections (`iggy`, `sources`, `s3`, `format`, ... `admin`) whose values differ
/// between `a` and `b`, in file order; empty when they are equal. Every value counts, secrets
/// included (compared, never returned). A reload (SIGHUP, daemon/cmd_run.cpp) keeps the Iggy
/// connection and its group membership unless `iggy` changed, and the S3 client unless `s3`
/// changed.
[[nodiscard]] std::vector<std::string> changed_sections(const sink_config& a, const sink_config& b);

/// The effective config as YAML, every key present, secrets as `****`.
[[nodiscard]] std::string to_yaml(const sink_config& c);

/// One documented key: docs/configuration.md and `--help-config`.
struct key_doc {
    std::string path;  ///< `s3.retry.deadline`; list items as `sources[].stream`
    std::string type;  ///< string, bool, integer, size, duration, `a | b | c`, ...
    std::string default_text;
    std::string help;
};
/// Every key of the schema, in file order.
[[nodiscard]] std::vector<key_doc> describe();
/// `describe()` as a Markdown table.
[[nodiscard]] std::string describe_markdown();
/// One top-level part of the file (`iggy`, `sources`, `s3`, ...) with its help, in file order.
struct section_doc {
    std::string name;
    std::string help;
};
[[nodiscard]] std::vector<section_doc> describe_sections();
/// Every key for a terminal (`check-config --help-config`): `key  type, default D`, then the
/// help wrapped at 100 columns and indented by 4.
[[nodiscard]] std::string describe_text();
/// The whole configuration reference, docs/configuration.md (`check-config --help-config
/// --markdown`): the file's rules, one key table per section, the checks across keys. The
/// `docs.configuration` test fails when the file differs from it.
[[nodiscard]] std::string describe_page();

/// Parses a size (`8MiB`, `8MB`, `1.5GiB`, `4096`). Error detail says what is wrong.
[[nodiscard]] result<std::uint64_t> parse_size(std::string_view s);
/// Parses a duration (`250ms`, `10s`, `10m`, `1h`, `1d`, `1h30m`, `0`).
[[nodiscard]] result<milliseconds> parse_duration(std::string_view s);
/// `8MiB`, `64KiB` where exact, else `12345` (bytes).
[[nodiscard]] std::string format_size(std::uint64_t bytes);
/// `250ms`, `10s`, `10m`, `1h`, `1d`, `1h30m` (shortest exact form).
[[nodiscard]] std::string format_duration(milliseconds d);
/// Replaces `${VAR}` / `${VAR:-default}` in `s`; the error names the unset variable.
[[nodiscard]] result<std::string> interpolate(std::string_view s, const env_lookup& env);

/// Errors of the config module.
enum class errc {
    invalid_value = 1,  ///< a value cannot be read as its key's type
    unset_variable,     ///< `${VAR}` without default, and VAR is not set
    invalid_config,     ///< validation failed (the detail lists the problems)
    unreadable_file,    ///< the config file cannot be read
};
const boost::system::error_category& config_category() noexcept;
inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), config_category()}; }

}  // namespace iss::config

namespace boost::system {
template <>
struct is_error_code_enum<iss::config::errc> : std::true_type {};
}  // namespace boost::system
