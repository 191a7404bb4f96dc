// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The ports of the pipeline: small interfaces it defines for what it needs from the outside
/// (an object store, an offset store, a message source, a dead-letter topic, the table step,
/// record encoders, key naming, sleeping). The daemon plugs in thin adapters over `s3::client`, `iggy::client`
/// and `format`; the unit tests plug in fakes. Every call is awaited directly by the pipeline,
/// so arguments passed by reference or view stay valid until the awaitable completes.
///
/// Outcomes are values, never exceptions: each adapter is the one place where its client's
/// exceptions and error codes become these outcomes (docs/architecture.md §8.4.4). Cancellation
/// (`operation_aborted`) is the exception: it propagates as an exception.

#include "common/digests.hpp"
#include "common/net/sleeper.hpp"
#include "common/types.hpp"
#include "pipeline/types.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iss::pipeline {

template <class T>
using task = boost::asio::awaitable<T>;

// ---------------------------------------------------------------------------------------
// Object store (S3)

/// The outcome class of one store operation, after the client's own retries.
enum class store_status {
    ok,         ///< done (200 on Put / Complete / Head ...)
    exists,     ///< 412 Precondition Failed on a conditional write: the key already exists
    not_found,  ///< NoSuchKey / NoSuchUpload / 404 on HEAD
    retryable,  ///< the client gave up within its budget, but a later attempt may succeed
    fatal,      ///< will not succeed without operator action (AccessDenied, NoSuchBucket ...)
};

/// "ok", "exists", ...
[[nodiscard]] std::string_view to_string(store_status s) noexcept;

/// A store outcome with a value for `ok` (for example an ETag or an upload id).
template <class T>
struct store_result {
    store_status status = store_status::ok;
    T value{};
    std::string detail;  ///< why, for the log (error code, request id); never a secret
    /// The store's error code of a failed answer (S3 `<Code>`: AccessDenied,
    /// KMS.DisabledException ...; the HTTP status when the answer had no body; empty when no
    /// answer came); what delivery_health counts refusals by.
    std::string code;
};
struct none {};

/// One part's bytes (valid until the next read) and the digests the writer computed while
/// the bytes were produced (`writer_ports::part_hashers`): the store sends them instead of
/// reading the part a second time to compute them.
struct part_view {
    part_view(std::string_view b, body_digests d = {}) : bytes{b}, digests{d} {}  // NOLINT
    std::string_view bytes;
    body_digests digests;
    /// Optional: told each stretch of `bytes` once an attempt has sent it (s3::client::part_body::sent).
    std::function<void(std::string_view)> sent;
};

/// Computes one part's digests as its bytes are produced (the daemon's is `s3::body_digester`
/// with the digests the S3 client needs: pipeline/adapters/s3_store.hpp). One per open object;
/// used by one thread at a time (the event loop, or the pool thread running a run).
class part_hasher {
public:
    virtual ~part_hasher() = default;
    /// Adds the next bytes of the part.
    virtual void update(std::string_view bytes) noexcept = 0;
    /// The digests of the bytes since the last finish(); then starts over.
    [[nodiscard]] virtual body_digests finish() noexcept = 0;
};
/// Makes a part_hasher (writer_ports::part_hashers).
using part_hasher_factory = std::function<std::unique_ptr<part_hasher>()>;

/// Gives a multipart upload one part's bytes: `(offset, length)` within the object -> a view
/// of exactly `length` bytes, valid until the next call; an error ends the upload (`fatal`).
using part_reader = std::function<result<part_view>(std::uint64_t offset, std::size_t length)>;

/// What the pipeline needs from S3. Implementations apply the client's retry policy and,
/// in consumer-group mode, the per-operation deadline (`s3.retry.deadline`) inside each call.
class object_store {
public:
    virtual ~object_store() = default;
    /// PutObject with user metadata (`range` as `x-amz-meta-iggy-*`), and `If-None-Match: *`
    /// when `if_none_match`. A 412 answers `exists`. `digests`: the body's digests the writer
    /// computed already (as `part_view::digests`).
    virtual task<store_result<none>> put_object(const object_key& key, std::string_view body, const object_range& range,
                                                std::string_view content_type, bool if_none_match,
                                                body_digests digests) = 0;
    /// A multipart upload of a `size`-byte object in `part_size` parts read through `read`:
    /// created with the object's final metadata (S3 fixes user metadata at Create, so the
    /// pipeline uploads once the range is known), completed with `If-None-Match: *` when
    /// `if_none_match` (a 412 answers `exists`), aborted when not completed.
    virtual task<store_result<none>> put_multipart(const object_key& key, std::uint64_t size, std::uint64_t part_size,
                                                   part_reader read, const object_range& range,
                                                   std::string_view content_type, bool if_none_match) = 0;
    /// HeadObject; value = user metadata (names lower-case, without `x-amz-meta-`).
    virtual task<store_result<user_metadata>> head_object(const object_key& key) = 0;
};

// ---------------------------------------------------------------------------------------
// Offsets (Iggy)

/// The outcome of storing or loading a consumer offset.
enum class offset_status {
    ok,
    /// 3022 NotResolvedConsumer, 5006 ConsumerGroupMemberNotFound or 5000 (the group is gone):
    /// not ours any more
    not_owner,
    retryable,  ///< connection trouble; the adapter reconnects
    fatal,
};
[[nodiscard]] std::string_view to_string(offset_status s) noexcept;

struct offset_result {
    offset_status status = offset_status::ok;
    std::optional<std::uint64_t> offset;  ///< load: the stored offset, nullopt when none is stored
    std::string detail;
    /// load (`ok`): the offset to resume from belongs to a topic deleted and created again (an
    /// Iceberg table's summary records an older creation time of the topic): the partition
    /// must not be read from it; the consumer stops it as an offset reset
    /// (`iggy.on_offset_reset: fail`). Says what was found and what to do.
    std::optional<std::string> reset;
};

/// Consumer offsets of this consumer (or group) in Iggy, always with an explicit partition.
class offset_store {
public:
    virtual ~offset_store() = default;
    /// StoreConsumerOffset(partition, offset): `offset` is the last consumed message.
    virtual task<offset_result> store_offset(const partition_ref& p, std::uint64_t offset) = 0;
    /// GetConsumerOffset(partition).
    virtual task<offset_result> load_offset(const partition_ref& p) = 0;
};

// ---------------------------------------------------------------------------------------
// Messages (Iggy)

/// One poll reply. `messages` are views valid until the next call on the source.
struct poll_reply {
    std::uint32_t partition = 0;       ///< the partition the server answered for
    std::uint64_t current_offset = 0;  ///< the partition's newest offset (0 when empty)
    std::vector<message> messages;     ///< ascending offsets
    /// When set, the bytes (and `view`s) the messages point into, owned by this reply:
    /// the views stay valid as long as the reply lives, whatever other polls happen meanwhile
    /// (the consumer polls several partitions concurrently over one connection). When null,
    /// the views are valid only until the next poll (fakes in tests).
    std::shared_ptr<const void> storage;
};

enum class source_status {
    ok,
    not_member,  ///< 5006, or 5000 (the group went with its topic or stream): join again
    retryable,   ///< connection trouble; the adapter reconnects (see `session`)
    fatal,       ///< e.g. unknown stream or topic, permission denied
};
[[nodiscard]] std::string_view to_string(source_status s) noexcept;

struct poll_result {
    source_status status = source_status::ok;
    poll_reply reply;
    std::string detail;
};

/// A topic's partition ids, or why they could not be read (`fatal`: the stream or topic does
/// not exist, or the user may not read it; `retryable`: connection trouble).
struct partitions_result {
    source_status status = source_status::ok;
    std::vector<std::uint32_t> ids;
    std::uint64_t created_at = 0;  ///< the topic's creation time (GetTopic), µs: its generation
    std::string detail;            ///< why, for the log, naming what to check
};

/// Polls Iggy with `auto_commit = 0`. In group mode the consumer is the group.
class message_source {
public:
    virtual ~message_source() = default;
    /// Poll `count` messages. `partition`: explicit, or nullopt for a group's partition-less
    /// poll (the server picks round-robin). `from`: strategy Offset(from), or nullopt for
    /// First.
    virtual task<poll_result> poll(const topic_ref& t, std::optional<std::uint32_t> partition,
                                   std::optional<std::uint64_t> from, std::uint32_t count) = 0;
    /// JoinConsumerGroup (group mode; creates the group when missing).
    virtual task<source_status> join(const topic_ref& t) = 0;
    /// LeaveConsumerGroup (group mode).
    virtual task<source_status> leave(const topic_ref& t) = 0;
    /// The topic's partition ids (single-consumer `partitions: all`, assignment discovery).
    virtual task<partitions_result> partitions(const topic_ref& t) = 0;
    /// A number that changes on every reconnect: a new connection is a new group member, so
    /// everything held for the old one is dropped (docs/architecture.md §3.5).
    [[nodiscard]] virtual std::uint64_t session() const = 0;
};

/// Sends a refused message to the dead-letter topic (design: original headers plus
/// `iggy-s3-sink-error` and `iggy-s3-sink-source`), balanced, and waits for the ack.
class dead_letter_sink {
public:
    virtual ~dead_letter_sink() = default;
    virtual task<source_status> send(const message& m, const partition_ref& source, std::string reason) = 0;
};

// ---------------------------------------------------------------------------------------
// The table step: after objects are durable, before the offset that covers them is stored

/// What an encoder learnt of an object's columns while writing it (a typed format feeding a
/// table step: Iceberg's column statistics, pipeline/adapters/format_encoder.hpp). Opaque to
/// the core, which carries it from the encoder to the table step with the durable object.
class object_stats {
public:
    virtual ~object_stats() = default;
};

/// One object that is durable in the store (200 on PutObject / CompleteMultipartUpload, or
/// found there on a 412), as the table step sees it.
struct durable_object {
    object_key key;
    partition_ref partition;  ///< the source stream, topic and partition
    /// First and last offset and record count: as written, or as the existing object's
    /// `x-amz-meta-iggy-*` metadata says when adopted.
    object_range range;
    /// Bytes as stored (encoded, compressed); nullopt for an adopted object (not read back:
    /// a HEAD gives it when needed).
    std::optional<std::uint64_t> size;
    bool adopted = false;  ///< existed already (412): written by an earlier run or another owner
    /// The encoder's `stats()` of the object as written; nullptr for an adopted object (not
    /// read back) or an encoder without.
    std::shared_ptr<const object_stats> stats;
};

/// The outcome of one table step.
enum class table_status {
    ok,         ///< the objects are in the table: the offset may be stored
    retryable,  ///< not committed (a conflict, the catalog unreachable): try again with the same objects
    fatal,      ///< will not succeed without operator action (permissions, a missing table)
    /// taken, to be committed with a later batch (Iceberg: at `iceberg.commit_interval`): the
    /// offset stays pending (stored nothing, uploaded nothing again) and the step is called
    /// again at the writer's next tick, without a backoff wait or a warning
    deferred,
};
[[nodiscard]] std::string_view to_string(table_status s) noexcept;

struct table_result {
    table_status status = table_status::ok;
    std::string detail;  ///< why, for the log (never a secret)
    /// A failure: the step's failed attempts in a row for this object's table, this one
    /// included (1 for the first); 0 when the step does not count them.
    unsigned attempt = 0;
};

/// The step between "object durable" and "offset stored" (invariant 7 of delivery.hpp): a
/// table commit (Iceberg: data files appended in one snapshot) or a notification. Unset in
/// `writer_ports` (the default) it is a no-op: an offset is stored as soon as it is durable.
///
/// The writer calls `commit` when it is about to store offset `through` of partition `p` and
/// objects became durable since the last successful call. The offset is stored only after
/// `ok`. On `retryable` / `fatal` nothing is stored and nothing is uploaded again: the writer
/// calls again later (single mode after a backoff wait, without end; group mode at its next
/// tick or commit) with the same objects, plus any that became durable meanwhile. After a
/// restart, a hand-over or a failed offset store the same key can come again (adopted):
/// an implementation must treat a key it holds already as done (idempotent by key).
class table_step {
public:
    virtual ~table_step() = default;
    /// \param p the source partition (stream, topic, partition id)
    /// \param objects in first-offset order, each whole at or below `through`; never empty
    /// \param through the offset about to be stored: every message of `p` up to it is durable
    ///        (in `objects`, in objects of earlier calls, or skipped / dead-lettered)
    virtual task<table_result> commit(const partition_ref& p, std::span<const durable_object> objects,
                                      std::uint64_t through) = 0;
    /// `p` is being handed over (`partition_writer::flush(hand_over)`: group polls stopped
    /// returning it) from `true` until the matching `false`: its calls meanwhile must not
    /// answer `deferred` to batch (nor wait out a failure's backoff) but commit at once, so
    /// that its offset is stored as part of the revocation and the new owner does not wait
    /// for the server's rebalance timeout (docs/protocol.md §7.1). Default: nothing (a step
    /// that does not batch).
    virtual void handing_over(const partition_ref& p, bool on) {
        (void)p;
        (void)on;
    }
};

// ---------------------------------------------------------------------------------------
// Encoding and naming

/// Turns messages into the bytes of ONE object (format writer + compressor).
/// Contract: `append` either appends the whole record to `out` and returns success, or
/// leaves `out` untouched and returns an error (a bad message). Output may lag input (a
/// compressor buffers); `finish` writes everything that is left.
class record_encoder {
public:
    virtual ~record_encoder() = default;
    virtual void begin(std::string& out) = 0;
    virtual result<void> append(const message& m, const partition_ref& p, std::string& out) = 0;
    virtual void finish(std::string& out) = 0;
    /// Bytes held inside the encoder for this object and not yet in `out` (Parquet: the open
    /// row group, uncompressed), counted by rotation on `max_bytes`. Default 0.
    [[nodiscard]] virtual std::uint64_t buffered() const { return 0; }
    /// Bytes of memory the encoder holds now: `buffered()` and its codec's state (a
    /// compressor's input block, a zstd context once its first block is compressed), charged
    /// to memory.max_buffered with its object. Default `buffered()`.
    [[nodiscard]] virtual std::uint64_t memory() const { return buffered(); }
    /// After `finish`: what the encoder learnt of the object's columns (`object_stats`), for
    /// the table step. Default nullptr (none).
    [[nodiscard]] virtual std::shared_ptr<const object_stats> stats() const { return nullptr; }
};

/// Makes one encoder per object; knows the object's content type.
class encoder_factory {
public:
    virtual ~encoder_factory() = default;
    [[nodiscard]] virtual std::unique_ptr<record_encoder> make() const = 0;
    [[nodiscard]] virtual std::string content_type() const = 0;
    /// The most each encoder's codec state can take (format::codec_memory: a zstd context at
    /// its level), for the start log and check-config. Default 0.
    [[nodiscard]] virtual std::uint64_t state_bytes() const { return 0; }
};

/// The encoded partition a message belongs to: its object key with `{start_offset}` left
/// out, and its time bucket when the key has time fields. Messages of one source partition
/// with different encoded partitions go to different objects (delivery.hpp).
struct encoded_partition {
    /// Equal for exactly the messages whose keys differ only in the first offset and whose
    /// time buckets are equal (the two 02 hours of a fall-back night render alike but differ).
    std::string id;
    /// The message's time bucket (the key's finest time field), when the key has one.
    std::optional<std::int64_t> bucket;
};

/// Renders an object key from the only inputs a key may depend on (docs/architecture.md §3.2): the
/// source partition, the offset of the object's first message and data that first message
/// carries (record time, headers, payload fields). Nothing else is passed (no clock), so a
/// replay cannot render a different key.
class key_namer {
public:
    virtual ~key_namer() = default;
    /// The key of an object of `p` whose first message has `first_offset`, for a key without
    /// record placeholders (or with every one of them missing).
    [[nodiscard]] virtual object_key key(const partition_ref& p, std::uint64_t first_offset) const = 0;
    /// As key(), for the topic generation `topic_created` (GetTopic `created_at`, µs; what a
    /// `{topic_created}` placeholder renders). Default: key(p, first_offset).
    [[nodiscard]] virtual object_key key_in(const partition_ref& p, std::uint64_t first_offset,
                                            std::uint64_t topic_created) const {
        (void)topic_created;
        return key(p, first_offset);
    }
    /// The encoded partition of `m`. An error is a bad message (`delivery.on_bad_message`),
    /// e.g. a record time that cannot be read. Default: one encoded partition per partition.
    /// Non-const in effect: an implementation may keep parse buffers (single-threaded).
    [[nodiscard]] virtual result<encoded_partition> encode(const partition_ref& p, const message& m) const {
        (void)p;
        (void)m;
        return encoded_partition{};
    }
    /// The key of an object whose first message is `first`. Default: key(p, first.offset).
    [[nodiscard]] virtual object_key key_for(const partition_ref& p, const message& first) const {
        return key(p, first.offset);
    }
    /// Whether a message of a later time bucket closes the objects of earlier buckets: true
    /// when the record time is Iggy's append time, which never goes back within a partition.
    [[nodiscard]] virtual bool closes_on_later_bucket() const { return false; }
    /// Whether keys depend on the message (record placeholders): then one partition may have
    /// several encoded partitions at once. Default: no (encode() gives one for all).
    [[nodiscard]] virtual bool record_dependent() const { return false; }
};

/// Waits (backoff between retries): the project's one sleeper (`common/net/sleeper.hpp`).
/// Tests advance a manual clock instead of sleeping.
using sleeper = iss::sleeper;

}  // namespace iss::pipeline
