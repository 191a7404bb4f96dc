#pragma once
/// \file
/// THE DELIVERY CONTRACT (design.md §3): exactly-once in the bucket's final state.
///
/// This header and delivery.cpp are the one place where the six invariants live. Anything
/// else in the pipeline (router, consumer loop) only decides WHEN to call the partition
/// writer; the writer decides what is written, where, and when an offset may be stored.
///
/// ## The naive version, and why each step of it loses or duplicates data
///
///     loop: batch = poll(auto_commit = 1); buffer += batch; if full: put(key(now), buffer)
///
/// 1. `auto_commit = 1` stores the offset when the poll is answered, before anything is
///    uploaded: a crash loses the buffer (at-most-once; what Iggy's own sink does).
///    So polls use `auto_commit = 0` and we store offsets ourselves, AFTER the upload.
/// 2. Upload, then store the offset: a crash between the two replays the range, and a key
///    with the upload time in it writes it a second time (duplicates). So keys are a
///    function of (stream, topic, partition, first offset) only, and a replay writes the
///    same keys.
/// 3. Same key, plain PUT: the replay overwrites. Harmless after a crash, fatal in a
///    consumer group: Iggy 0.8 never tells a member it lost a partition, so a stale owner
///    can finish an upload AFTER the new owner wrote (and committed) that key with MORE
///    messages; the stale object replaces it and committed messages are gone. So objects are
///    written once (`If-None-Match: *`) and a 412 is answered by ADOPTING what exists.
///
/// ## The invariants and where they are enforced
///
/// 1. **Commit after durability** — `partition_writer::commit_through` is the only caller of
///    `offset_store::store_offset`. It is reached only from `finish_delivery`, with the last
///    offset of an object that S3 acknowledged (200 on PutObject or
///    CompleteMultipartUpload) or that already existed (412 + HEAD), or for a message that
///    was skipped / dead-lettered (ack awaited) while no object was open. Writes are
///    sequential per partition, so "every object up to it is durable" holds by construction:
///    at most one object per partition is ever being uploaded, and the next one is opened
///    only after the previous one's fate is known.
/// 2. **Deterministic keys** — a key is rendered once, when the object is opened, by
///    `key_namer::key(partition, first_offset)`; the port takes nothing else (no time, no
///    end offset, no randomness). `check_key_namer` refuses a namer that renders two
///    different keys for the same input or the same key for two first offsets.
/// 3. **Write once, adopt what exists** — every PutObject / CompleteMultipartUpload carries
///    `If-None-Match: *` (where the store honours it) and the range in
///    `x-amz-meta-iggy-first-offset/-last-offset/-count`. On 412 (`store_status::exists`)
///    the writer HEADs the key, reads the range, counts those messages as done, commits the
///    existing last offset, and continues at last + 1: when the existing object holds more
///    than ours, the extra messages we hold are dropped; when it holds less, the writer
///    REWINDS (the consumer polls again from last + 1), so the next key is exactly the one a
///    crash-free run would have written. S3 fixes user metadata at CreateMultipartUpload,
///    so a multipart upload is created only when the object is closed and its range known;
///    until then bytes beyond one part wait in an unlinked spool file (spool.hpp), keeping
///    memory per open object at about one part.
/// 4. **Capabilities are probed, not assumed** — `plan_delivery` turns the probe result and
///    `s3.conditional_writes` into the strategy and names the guarantee in force (the
///    daemon logs it at start): with conditional Complete, big objects go multipart; where
///    Complete ignores the condition (Ceph RGW 16), objects are closed at `part_size` and
///    always go up with a conditional PutObject (a HEAD before Complete would be a race);
///    without conditional PutObject a HEAD before each write adopts what a crashed run left,
///    which keeps exactly-once for a single owner, and a forced rebalance may duplicate.
/// 5. **Ownership** — `partition_writer::flush(hand_over)` is how a partition that group
///    polls stopped returning is finished, uploaded and committed at once (router). Its
///    data is dropped without uploading only on `offset_status::not_owner` (3022/5006) or
///    after a reconnect (`drop`). In group mode a store operation that fails (the adapter
///    bounds each one by `s3.retry.deadline`) is NOT retried here: the object is dropped and
///    the writer rewinds to the committed offset, well inside the server's 30 s hand-over
///    timeout. In single-consumer mode it is retried without end (logged, counted).
/// 6. **Nothing is lost on a clean stop** — `flush(stop)` closes and delivers the open
///    object and commits; the router calls it for every writer before the group is left.
///
/// Bad messages (`delivery.on_bad_message`): `fail` delivers what precedes the message and
/// stops the partition; `skip` counts and logs it; `dead_letter` sends it and waits for the
/// ack. Skipped and dead-lettered messages are covered by the object they fall into (its
/// last offset), or committed at once when no object is open, so nothing is re-read forever.

#include "common/backoff.hpp"
#include "common/clock.hpp"
#include "common/log.hpp"
#include "common/stats.hpp"
#include "pipeline/ports.hpp"
#include "pipeline/rotation.hpp"
#include "pipeline/spool.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>

namespace iss::pipeline {

/// Single consumer (explicit partitions, retries without end) or consumer group (bounded
/// operations, hand-over).
enum class consumer_mode { single, group };

/// `s3.conditional_writes`.
enum class conditional_writes { auto_detect, required, off };

/// What the capability probe found (s3 client probe).
struct store_capabilities {
    bool conditional_put = false;       ///< PutObject honours If-None-Match: *
    bool conditional_complete = false;  ///< CompleteMultipartUpload honours it
};

/// How objects are written.
enum class upload_strategy {
    multipart_conditional,    ///< PutObject below part_size, multipart above; both conditional
    single_part_conditional,  ///< objects closed at part_size; conditional PutObject only
    head_then_write,          ///< no usable condition: HEAD before each write, adopt if it exists
};

/// The strategy and the guarantee in force.
struct delivery_plan {
    upload_strategy strategy = upload_strategy::multipart_conditional;
    bool if_none_match = true;  ///< send If-None-Match: * on writes
    std::string guarantee;      ///< one line for the startup log
};

/// Chooses the strategy from the probe and the configuration (design.md §3.4).
/// errc::conditional_required when `required` meets a store without conditional PutObject.
[[nodiscard]] result<delivery_plan> plan_delivery(store_capabilities caps, conditional_writes cw, consumer_mode mode);

/// Checks that `namer` is a function of (partition, first offset) only and distinguishes
/// first offsets and partitions (design.md §3.2); errc::nondeterministic_key otherwise.
[[nodiscard]] result<void> check_key_namer(const key_namer& namer, const partition_ref& sample);

/// `delivery.on_bad_message`.
enum class bad_message_policy { fail, skip, dead_letter };

/// Options of one partition writer (the daemon fills them from config).
struct writer_options {
    std::uint64_t part_size = 8ull << 20;  ///< s3.part_size, bytes (>= 5 MiB in production)
    consumer_mode mode = consumer_mode::single;
    delivery_plan plan;
    bad_message_policy on_bad_message = bad_message_policy::fail;
    backoff_policy retry_backoff{};  ///< between whole-operation retries (single mode)
    std::string spool_dir;           ///< where objects above one part wait; empty: $TMPDIR
};

/// Timing statistics of the writers (seconds), shared by every writer of a router; the
/// admin server publishes them as `upload_duration_seconds` and `commit_duration_seconds`.
struct delivery_timings {
    iss::stats::histogram upload;  ///< object closed -> durable (200, or 412 adopted), retries included
    iss::stats::histogram commit;  ///< one StoreConsumerOffset call that succeeded
};

/// The ports a writer uses; all outlive the writer.
struct writer_ports {
    object_store& store;
    offset_store& offsets;
    const encoder_factory& encoders;
    const key_namer& namer;
    sleeper& sleep;
    const iss::clock& clock;
    dead_letter_sink* dead_letters = nullptr;  ///< required for bad_message_policy::dead_letter
    delivery_timings* timings = nullptr;       ///< where durations are recorded (the router sets its own)
};

/// Counters of one writer (also summed by the router for logs and the lag view).
struct writer_counters {
    std::uint64_t objects_written = 0;   ///< acknowledged by S3
    std::uint64_t objects_adopted = 0;   ///< 412: existed already, range adopted
    std::uint64_t records_written = 0;   ///< in objects we wrote
    std::uint64_t records_dropped = 0;   ///< held but dropped (adoption, give-up, not owner, reconnect)
    std::uint64_t bad_skipped = 0;
    std::uint64_t bad_dead_lettered = 0;
    std::uint64_t retries = 0;           ///< whole-operation retries after the client gave up
    std::uint64_t commits = 0;
    std::uint64_t payload_bytes_written = 0;  ///< message payload bytes in objects we wrote
    std::uint64_t bytes_uploaded = 0;    ///< object bytes (encoded, compressed) in objects we wrote
    std::uint64_t bad_failed = 0;        ///< bad messages that stopped the partition (policy fail)
};


/// The state of a writer.
enum class writer_state {
    running,
    failed,   ///< on_bad_message: fail, or an unrecoverable store answer; the partition is stopped
    revoked,  ///< 3022/5006 on commit: not ours any more
};

/// What `feed` tells the caller to do next.
enum class feed_status {
    ok,      ///< all consumed; poll on from next_offset()
    rewind,  ///< the rest of the batch was NOT consumed: poll again from next_offset()
    stopped, ///< the writer is failed or revoked (see state())
};

/// One (stream, topic, partition): the open object, its encoder and spool, the offsets.
///
/// Lifecycle: made by the router when the partition is first polled, with the committed
/// offset; fed poll batches in order; ticked for idle/schedule; flushed on hand-over and
/// stop; dropped on reconnect. Runs on the daemon's single event-loop thread; its
/// coroutines are awaited one at a time by the router (never concurrently), which is what
/// makes the ordering of invariant 1 hold. Not thread-safe.
class partition_writer {
public:
    /// \param committed the offset stored in Iggy for this partition (nullopt: none), so
    ///        polling starts at committed + 1.
    partition_writer(
      partition_ref p, const writer_options& o, const rotation_policy& rotation, writer_ports ports,
      std::optional<std::uint64_t> committed);
    partition_writer(const partition_writer&) = delete;
    partition_writer& operator=(const partition_writer&) = delete;
    ~partition_writer();

    /// Consumes one poll batch (ascending offsets). Messages below next_offset() are
    /// ignored (already held or adopted). May upload and commit on the way (rotation).
    task<feed_status> feed(std::span<const message> batch);
    /// Rotates the open object when idle/schedule say so; retries a commit that failed earlier.
    task<void> tick();
    /// Closes, uploads and commits the open object now (hand-over, stop). Returns true when
    /// nothing is held any more (delivered and committed, or nothing there).
    task<bool> flush(rotate_reason why);
    /// Drops everything held without uploading (reconnect, not owner). Rewinds to the
    /// committed offset.
    void drop(std::string_view why);

    /// The offset to poll from next (nullopt: the partition's first retained offset).
    [[nodiscard]] std::optional<std::uint64_t> next_offset() const noexcept { return next_; }
    /// The last offset stored in Iggy by this writer (or found there).
    [[nodiscard]] std::optional<std::uint64_t> committed() const noexcept { return committed_; }
    /// Durable but not yet committed (a commit failed in group mode and will be retried).
    [[nodiscard]] std::optional<std::uint64_t> pending_commit() const noexcept { return pending_commit_; }
    [[nodiscard]] bool holds_data() const noexcept { return open_ != nullptr; }
    /// Bytes of the open object held in memory or in its spool file (0 when none is open).
    [[nodiscard]] std::uint64_t buffered_bytes() const noexcept;
    [[nodiscard]] writer_state state() const noexcept { return state_; }
    [[nodiscard]] const writer_counters& counters() const noexcept { return counters_; }
    [[nodiscard]] const partition_ref& partition() const noexcept { return p_; }
    /// Time until idle/schedule can fire for the open object (nullopt: no timer needed).
    [[nodiscard]] std::optional<std::chrono::nanoseconds> time_to_due() const;

private:
    struct open_object;
    enum class delivered { ok, rewound, given_up, stopped };

    task<feed_status> feed_one(const message& m);
    task<delivered> close_and_deliver(rotate_reason why);
    task<delivered> absorb(std::uint64_t offset);
    task<delivered> handle_bad_message(const message& m, const error& e);
    task<store_result<none>> upload(open_object& o, const object_range& r);
    task<store_result<none>> upload_multipart(open_object& o, const object_range& r);
    task<std::optional<object_range>> read_existing(const object_key& key, bool& gave_up, bool& vanished);
    static feed_status to_feed(delivered d) noexcept;
    task<delivered> finish_delivery(std::uint64_t durable_through);
    task<bool> commit_through(std::uint64_t offset);
    task<bool> retry_or_give_up(unsigned& attempt, std::string_view what, std::string_view detail, bool fatal);
    void give_up(std::string_view why);
    void open(const message& m);
    void discard_open();
    [[nodiscard]] open_object_state rotation_state() const;

    partition_ref p_;
    const writer_options& o_;
    const rotation_policy& rotation_;
    writer_ports ports_;
    iss::log::logger log_;
    std::unique_ptr<open_object> open_;
    std::optional<std::uint64_t> next_;
    std::optional<std::uint64_t> committed_;
    std::optional<std::uint64_t> pending_commit_;
    writer_state state_ = writer_state::running;
    writer_counters counters_;
    std::mt19937_64 rng_;
};

}  // namespace iss::pipeline
