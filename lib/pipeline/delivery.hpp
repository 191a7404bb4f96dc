// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// THE DELIVERY CONTRACT (docs/architecture.md §3): exactly-once in the bucket's final state.
///
/// This header, delivery*.cpp and the two pure parts the writer drives are the one place
/// where the seven invariants live: `commit_ledger` (commit_ledger.hpp: what is handled,
/// durable, adopted or re-read, the commit point) and `open_object_set` (open_object_set.hpp:
/// the open and in-flight objects per encoded partition, what closes when). Both take events
/// and answer without I/O; `partition_writer` is the coroutine that feeds them what it sees
/// and carries out their answers through the ports. Anything else in the pipeline (router,
/// consumer loop) only decides WHEN to call the partition writer; the writer decides what is
/// written, where, and when an offset may be stored.
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
///    `offset_store::store_offset`, and it is reached only through `commit_durable`, with the
///    commit point below (every message up to it is in an object S3 acknowledged (200 on
///    PutObject or CompleteMultipartUpload), in one that already existed (412 + HEAD), or was
///    skipped / dead-lettered (ack awaited)). Uploads are sequential per partition: at most
///    one object of a partition is being uploaded at a time.
/// 2. **Deterministic keys** — a key is rendered once, when the object is opened, by
///    `key_namer::key_for(partition, first message)`: from the partition, the first offset and
///    data that first message carries (record time, headers, payload fields), never from the
///    clock, an end offset or randomness. `check_key_namer` refuses a namer that renders two
///    different keys for the same input or the same key for two first offsets.
/// 3. **Write once, adopt what exists** — every PutObject / CompleteMultipartUpload carries
///    `If-None-Match: *` (where the store honours it) and the range in
///    `x-amz-meta-iggy-first-offset/-last-offset/-count`. On 412 (`store_status::exists`)
///    the writer HEADs the key, reads the range and counts those messages as done: when the
///    existing object holds more than ours, the extra messages we hold are dropped; when it
///    holds less, the writer REWINDS (the consumer polls again from last + 1), so the next key
///    is exactly the one a crash-free run would have written. S3 fixes user metadata at
///    CreateMultipartUpload, so a multipart upload is created only when the object is closed
///    and its range known; until then bytes beyond one part wait in an unlinked spool file
///    (spool.hpp), keeping memory per open object at about one part.
/// 4. **Capabilities are probed, not assumed** — `plan_delivery` turns the probe result and
///    `s3.conditional_writes` into the strategy and names the guarantee in force (the
///    daemon logs it at start): with conditional Complete, big objects go multipart; where
///    Complete ignores the condition (Ceph RGW 16), objects are closed at `part_size` and
///    always go up with a conditional PutObject (a HEAD before Complete would be a race);
///    without conditional PutObject a HEAD before each write adopts what a crashed run left,
///    which keeps exactly-once for a single owner, and a forced rebalance may duplicate.
/// 5. **Ownership** — `partition_writer::flush(hand_over)` is how a partition that group
///    polls stopped returning is finished, uploaded and committed at once (router); a table
///    step that batches is told (`table_step::handing_over`) and commits the partition's
///    objects then, so its offset is stored before the revocation's timeout. Its
///    data is dropped without uploading only on `offset_status::not_owner` (3022/5006) or
///    after a reconnect (`drop`). In group mode a store operation that fails (the adapter
///    bounds each one by `s3.retry.deadline`) is NOT retried here: the object is dropped and
///    the writer rewinds to the committed offset, well inside the server's 30 s hand-over
///    timeout. In single-consumer mode it is retried without end (logged, counted). A failed
///    offset store in group mode keeps the offset pending (durable), tried again after a wait
///    from s3.retry.base doubling up to s3.retry.cap (a hand-over or a stop tries at once),
///    so a store that keeps failing is no tight loop (one warning per attempt).
/// 6. **Nothing is lost on a clean stop** — `flush(stop)` closes and delivers every open
///    object and commits; the router calls it for every writer before the group is left.
/// 7. **The table step between durability and the offset** — when a table step is set
///    (`writer_ports::table`, `table_step` in ports.hpp: an Iceberg commit), each durable
///    object goes to it, in first-offset order, once it lies wholly at or below the offset
///    about to be stored, and BEFORE that offset is stored (`commit_through` calls
///    `table_through` first); the offset is stored only after the step answered ok. A failed
///    step stores nothing and uploads nothing again: it is retried with the same objects
///    (single mode after a backoff wait, group mode at the next tick or commit). A step that
///    batches (Iceberg's commit interval) answers `deferred`: the offset stays pending, no
///    wait, asked again at the next tick until it answers ok. A restart or
///    a new owner re-reads from the stored offset and hands the same keys again, adopted
///    after a 412, so the step is idempotent by key. Unset (the default), it is a no-op.
///
/// ## Several open objects per partition: the encoded-partition rules G1-G5
///
/// With record placeholders in the key (`{date}`, `{header:tenant}` ...), messages of one
/// partition whose keys differ in anything but `{start_offset}` belong to different encoded
/// partitions (`key_namer::encode`: the key with `{start_offset}` left out, plus the time
/// bucket) and go to different objects. Without them a partition has one encoded partition
/// and every rule below reduces to the single-object case. The naive generalisation, "store
/// the last offset of each object once it is durable", loses data: tenant A's object [3..10]
/// is durable, B's object opened at 5 is not; storing 10 and crashing loses B's 5..10.
///
/// - **G1, own first offset.** An object's key and range hold ITS first offset (its encoded
///   partition's first message since its previous object closed), last offset and count;
///   other encoded partitions' messages between them are not in it.
/// - **G2, adoption per encoded partition.** A 412 on encoded partition E's key marks done
///   only E's messages up to the existing object's last offset; when it holds less, only E is
///   re-read and the others' messages are passed over (`commit_ledger::adopted`, `classify`).
///   The re-read ends at the last message handled before it (not at the first one after it:
///   at the end of a stream none comes, and a re-read point left behind would hold G3's
///   commit point below the head for good).
/// - **G3, the commit point** (`commit_ledger::commit_point`). The stored offset is one below
///   the lowest first offset among the open objects, the in-flight ones (delivered in
///   first-offset order; `open_object_set::lowest_first`) and the encoded partitions being
///   re-read (with none of them: the last message handled), and it never falls inside a
///   delivered object: it moves down to one below the first offset of any delivered object
///   it would fall inside.
/// - **G4, bounded open objects.** At most `max_open_objects` are open per partition; a new
///   encoded partition above it closes the one with the oldest first message (`make_room`).
/// - **G5, time buckets.** The bucket is part of the encoded partition, so the two local 02
///   hours of a fall-back night are two objects (alike keys, different first offsets); with
///   Iggy's append time as record time a message of a later bucket closes every earlier one
///   (`earlier_buckets`).
///
/// Why G3 looks at delivered objects: with A's [3..10] durable and B's opened at 5 still
/// open, storing 4 would make a restart read from 5, meet A's 7 and 10 without A's first
/// message 3, open A's object at 7 under a new key and write 7 and 10 twice; so 2 is stored.
/// A restart from the stored offset + 1 then meets every encoded partition's first message
/// first, renders the crashed run's keys, and G2 converges it whatever the rotation cut: so
/// early cuts (max_open_objects, time buckets, memory) are safe. Delivered objects are kept
/// until the stored offset passes them; past 4 x max_open_objects of them every object is
/// closed once (`commit_stall`) so the stored offset moves.
///
/// Bad messages (`delivery.on_bad_message`; also a record time that cannot be read): `fail`
/// delivers what precedes the message and stops the partition; `skip` counts and logs it;
/// `dead_letter` sends it and waits for the ack. Skipped and dead-lettered messages are
/// covered by their encoded partition's open object (its last offset), and by the stored
/// offset once no object below them is open, so nothing is re-read forever.
///
/// ## Where each rule is tested
///
/// Each rule's tests carry its tag (tests/unit/pipeline/): `[inv1]` delivery_test.cpp (the
/// offset after the PutObject, none while uploads fail, a failed commit retried); `[inv2]`
/// delivery_test.cpp (replay keys, the namer check); `[inv3]` delivery_test.cpp (conditional
/// writes, adoption of more, of less, on Complete, without metadata); `[inv4]`
/// delivery_test.cpp (the plan, part_size objects, HEAD before write); `[inv5]` and `[inv6]`
/// delivery_test.cpp, router_test.cpp and consumer_test.cpp (hand-over, not owner, bounded
/// retries, reconnect, stop); `[inv7]` delivery_table_test.cpp (order, failures, adopted
/// objects, group mode);
/// `[g1]`..`[g5]` encoded_test.cpp (its crash-replay property test, `[replay]`, restarts
/// from every stored offset). The pure parts are tested without coroutines, events in and
/// answers checked: commit_ledger_test.cpp and open_object_set_test.cpp (tagged by rule too).
/// The CTest test `mutants` (mutants.py) breaks invariants 1-7 and rules G2-G5 on purpose
/// (G1 has none: its `[g1]` test in encoded_test.cpp is not checked by a mutant) and fails
/// unless that rule's tagged tests catch every break.

#include "common/backoff.hpp"
#include "common/clock.hpp"
#include "common/log.hpp"
#include "common/net/worker_pool.hpp"
#include "common/stats.hpp"
#include "pipeline/commit_ledger.hpp"
#include "pipeline/health.hpp"
#include "pipeline/memory.hpp"
#include "pipeline/open_object_set.hpp"
#include "pipeline/ports.hpp"
#include "pipeline/rotation.hpp"
#include "pipeline/spool.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace iss::pipeline {

/// Single consumer (explicit partitions, retries without end) or consumer group (bounded
/// operations, hand-over).
enum class consumer_mode { single, group };

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

/// Chooses the strategy from the probe and the configuration (docs/architecture.md §3.4).
/// errc::conditional_required when `required` meets a store without conditional PutObject.
[[nodiscard]] result<delivery_plan> plan_delivery(store_capabilities caps, conditional_writes cw, consumer_mode mode);

/// Checks that `namer` is a function of (partition, first offset) only and distinguishes
/// first offsets and partitions (docs/architecture.md §3.2); errc::nondeterministic_key otherwise.
[[nodiscard]] result<void> check_key_namer(const key_namer& namer, const partition_ref& sample);

/// Options of one partition writer (the daemon fills them from config).
struct writer_options {
    std::uint64_t part_size = 8ull << 20;  ///< s3.part_size, bytes (>= 5 MiB in production)
    consumer_mode mode = consumer_mode::single;
    delivery_plan plan;
    bad_message_policy on_bad_message = bad_message_policy::fail;
    backoff_policy retry_backoff{};  ///< between whole-operation retries (single mode)
    std::string spool_dir;           ///< where objects above one part wait; empty: $TMPDIR
    /// rotation.max_open_objects: open objects (encoded partitions) per partition; above it
    /// the object with the oldest first message is closed first. >= 1.
    std::uint32_t max_open_objects = 32;
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
    memory_budget* memory = nullptr;           ///< what open objects hold is charged here (the router sets its own)
    /// Where refusals of the store and spool failures are reported (health.hpp; the router
    /// sets its own).
    delivery_health* health = nullptr;
    /// The step after objects are durable and before their offset is stored (invariant 7;
    /// an Iceberg table commit). nullptr (the default): none, offsets are stored once durable.
    table_step* table = nullptr;
    /// performance.workers: where runs of records are formatted and compressed (nullptr or a
    /// pool without threads: inline, on the event-loop thread). See `partition_writer::feed`.
    iss::worker_pool* workers = nullptr;
    /// Makes the hasher of each open object's parts (pipeline/adapters/s3_store.hpp
    /// `part_hashers_for`: the CRC-32C or MD5 and the signed payload's SHA-256 the S3 client
    /// needs): when set, each part's digests are computed as its bytes are produced, on the
    /// thread that produced them (a pool thread for a run), and handed to the store with the
    /// part (`part_view::digests`), so the upload does not read every part a second time.
    part_hasher_factory part_hashers;
};

/// Counters of one writer (also summed by the router for logs and the lag view).
struct writer_counters {
    std::uint64_t objects_written = 0;  ///< acknowledged by S3
    std::uint64_t objects_adopted = 0;  ///< 412: existed already, range adopted
    std::uint64_t records_written = 0;  ///< in objects we wrote
    std::uint64_t records_dropped = 0;  ///< held but dropped (adoption, give-up, not owner, reconnect)
    std::uint64_t bad_skipped = 0;
    std::uint64_t bad_dead_lettered = 0;
    std::uint64_t retries = 0;  ///< whole-operation retries after the client gave up
    std::uint64_t commits = 0;
    std::uint64_t payload_bytes_written = 0;  ///< message payload bytes in objects we wrote
    std::uint64_t bytes_uploaded = 0;         ///< object bytes (encoded, compressed) in objects we wrote
    std::uint64_t bad_failed = 0;             ///< bad messages that stopped the partition (policy fail)
};

/// The state of a writer.
enum class writer_state {
    running,
    failed,   ///< on_bad_message: fail, or an unrecoverable store answer; the partition is stopped
    revoked,  ///< 3022/5006 on commit: not ours any more
};

/// What `feed` tells the caller to do next.
enum class feed_status {
    ok,       ///< all consumed; poll on from next_offset()
    rewind,   ///< the rest of the batch was NOT consumed: poll again from next_offset()
    stopped,  ///< the writer is failed or revoked (see state())
};

/// One (stream, topic, partition): the open object, its encoder and spool, the offsets.
///
/// Lifecycle: made by the router when the partition is first polled, with the committed
/// offset; fed poll batches in order; ticked for idle/schedule; flushed on hand-over and
/// stop; dropped on reconnect. Runs on the daemon's event-loop thread; its coroutines are
/// awaited one at a time by the router (never concurrently), which is what makes the
/// ordering of invariant 1 hold. Not thread-safe. With a worker pool (writer_ports::workers)
/// `feed` formats runs of records on a pool thread while its coroutine waits (feed_run);
/// only the run's object is touched there, and every decision stays on the event loop.
class partition_writer {
public:
    /// \param committed the offset stored in Iggy for this partition (nullopt: none), so
    ///        polling starts at committed + 1.
    partition_writer(partition_ref p, const writer_options& o, const rotation_policy& rotation, writer_ports ports,
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
    [[nodiscard]] std::optional<std::uint64_t> next_offset() const noexcept { return ledger_.next(); }
    /// The last offset stored in Iggy by this writer (or found there).
    [[nodiscard]] std::optional<std::uint64_t> committed() const noexcept { return ledger_.committed(); }
    /// Durable but not yet committed (a commit failed in group mode and will be retried).
    [[nodiscard]] std::optional<std::uint64_t> pending_commit() const noexcept { return ledger_.pending(); }
    [[nodiscard]] bool holds_data() const noexcept { return objects_.holds(); }
    /// Bytes of the open objects held in memory or in their spool files (0 when none is open).
    [[nodiscard]] std::uint64_t buffered_bytes() const noexcept;
    /// Bytes charged to the memory budget by this writer's open and in-flight objects.
    [[nodiscard]] std::uint64_t memory_bytes() const noexcept;
    /// The memory of this writer's largest open object (0: none open).
    [[nodiscard]] std::uint64_t largest_open_memory() const noexcept;
    /// How many bytes of memory.max_buffered the last `feed` lacked to take its next message,
    /// when the budget held it back (`rewind`); else 0. The consumer frees that much when
    /// nothing else moves (router::relieve).
    [[nodiscard]] std::uint64_t budget_shortfall() const noexcept { return budget_shortfall_; }
    /// Closes, uploads and commits the open object holding the most memory (the budget is
    /// full: memory_budget). Same outcome rules as `flush`; true when it was delivered.
    task<bool> shed_largest(rotate_reason why);
    [[nodiscard]] writer_state state() const noexcept { return state_; }
    /// Why a failed writer stopped (`partition_stopped{reason}`): "bad_message"
    /// (on_bad_message: fail) or "foreign_object" (an existing object without iggy-*
    /// metadata at its key); empty while running.
    [[nodiscard]] std::string_view stop_reason() const noexcept { return stop_reason_; }
    /// When this writer last stored an offset, or read the stored one at its creation
    /// (system clock; `last_commit_timestamp_seconds`).
    [[nodiscard]] clock::system_time last_commit_time() const noexcept { return last_commit_; }
    [[nodiscard]] const writer_counters& counters() const noexcept { return counters_; }
    [[nodiscard]] const partition_ref& partition() const noexcept { return p_; }
    /// Time until idle/schedule can fire for the open object (nullopt: no timer needed).
    [[nodiscard]] std::optional<std::chrono::nanoseconds> time_to_due() const;
    /// Group mode, after the store refused an upload (delivery_health): the partition is not
    /// polled again before this time (nullopt: no wait). The waits grow from s3.retry.base
    /// by doubling up to s3.retry.cap with each refusal in a row, and end with the first
    /// upload that succeeds; without them a refusing store would be asked again as fast as
    /// the partition can be re-read.
    [[nodiscard]] std::optional<clock::steady_time> retry_at() const noexcept { return retry_at_; }

private:
    struct open_object;
    enum class delivered { ok, rewound, given_up, stopped };
    /// The writer's object behind an entry of `objects_` (every entry is one).
    static open_object& as_object(open_object_entry& e) noexcept;
    static const open_object& as_object(const open_object_entry& e) noexcept;

    task<feed_status> feed_one(const message& m);
    task<delivered> close_and_deliver(std::vector<std::string> encoded, rotate_reason why);
    task<delivered> close_all(rotate_reason why);
    task<delivered> deliver_front(rotate_reason why);
    task<delivered> absorb(const message& m, const std::string* encoded);
    /// Re-charges `o` to the memory budget after its buffers changed.
    void recharge(open_object& o) const noexcept;
    /// Grows `o.buf` to hold at least `need` bytes (what the next record or run may take):
    /// by doubling, but never past one part plus the record (std::string's own doubling would
    /// reach twice the part size), nor past what memory.max_buffered has free.
    void reserve_for(open_object& o, std::size_t need) const;
    /// After feed_one put a message in `appended_to_`: formats the messages of `rest` that
    /// follow it into the same object as one run (encode_run: on the worker pool, or here
    /// without one or for a short run), then
    /// applies their bookkeeping and after_append. `taken`: how many of `rest` it consumed
    /// (0: none, feed_one takes the next).
    task<feed_status> feed_run(std::span<const message> rest, std::size_t& taken);
    /// Runs on a pool thread or the event loop: appends messages of `rest` to `o` while each stays in `o`
    /// with nothing to decide (see feed_run); touches `o`'s buffer and encoder only.
    /// Returns the number appended.
    [[nodiscard]] std::size_t encode_run(open_object& o, std::span<const message> rest) const;
    /// Extends `o`'s part digests (writer_ports::part_hashers) over the bytes appended since
    /// the last call; before any of them leaves the buffer. Touches only `o`.
    void checksum_new_bytes(open_object& o) const;
    /// The digests of the part at `offset` (`length` bytes) when every byte of it was summed
    /// as it was produced (else empty); the last partial part's are finished on first ask.
    [[nodiscard]] body_digests part_checksum(open_object& o, std::uint64_t offset, std::uint64_t length) const noexcept;
    /// The bookkeeping of `m` appended to `o` (counts, offsets, the commit point's inputs).
    void appended(open_object& o, const message& m, clock::steady_time now);
    /// The decisions after an append to `o`: spool a full part, rotate, unblock the commit.
    task<feed_status> after_append(open_object& o);
    /// 0 when appending `m` to the object `o` (nullptr: a new one) stays within
    /// memory.max_buffered: no growth needed, or the growth fits in what is free, or `o`
    /// holds no record yet and nothing but the batch being fed holds memory (a message larger
    /// than the budget still moves; its object is not grown past the budget again, though
    /// later records may fill the room it has). Otherwise how many more bytes would have to
    /// be free.
    [[nodiscard]] std::uint64_t budget_lack(const open_object* o, const message& m) const noexcept;
    task<delivered> handle_bad_message(const message& m, const error& e, const std::string* encoded);
    task<store_result<none>> upload(open_object& o, const object_range& r);
    task<store_result<none>> upload_multipart(open_object& o, const object_range& r);
    task<std::optional<object_range>> read_existing(const object_key& key, bool& gave_up, bool& vanished);
    /// Reports a store answer to writer_ports::health: a refusal (fatal, with its code)
    /// marks the store refusing and is logged when it starts; nothing else is reported here.
    void note_store_answer(store_status status, std::string_view code, std::string_view detail);
    /// An upload succeeded: the store accepts writes again (logged when it ends a refusal).
    void note_store_accepted();
    /// A spool append of `o` failed with `e` (health, one log line per change of fault).
    void note_spool_failure(const error& e);
    static feed_status to_feed(delivered d) noexcept;
    task<delivered> commit_durable();
    task<bool> commit_through(std::uint64_t offset);
    /// Invariant 7: hands the durable objects wholly at or below `offset` that the table step
    /// has not taken yet to it (none, or no step: ok without a call); forgets them on ok.
    task<table_result> table_through(std::uint64_t offset);
    /// The budget of one whole operation (upload, HEAD, dead-letter send, offset store):
    /// group mode one attempt (invariant 5), single mode no limit; waits from `retry_backoff`.
    [[nodiscard]] retry_budget operation_budget();
    /// After a failed attempt: waits the budget's next wait and returns true, or returns false
    /// when the budget is spent (logged).
    /// `check`: what a fatal failure's log line tells the operator to check; `attempt`: the
    /// attempt number the line gives (0: the budget's own count).
    task<bool> retry_or_give_up(retry_budget& budget, std::string_view what, std::string_view detail, bool fatal,
                                std::string_view check = "the s3 settings and permissions", unsigned attempt = 0);
    open_object& open(const message& m, const encoded_partition& e);
    [[nodiscard]] open_object_state rotation_state(const open_object& o) const;

public:
    /// The offset that may be stored now (G3 in the essay above; `commit_ledger::commit_point`
    /// over the open and in-flight objects). nullopt: nothing to store.
    [[nodiscard]] std::optional<std::uint64_t> commit_point() const {
        return ledger_.commit_point(objects_.lowest_first());
    }
    /// Open objects (one per encoded partition with data), for tests and logs.
    [[nodiscard]] std::size_t open_objects() const noexcept { return objects_.open_count(); }

private:
    partition_ref p_;
    const writer_options& o_;
    const rotation_policy& rotation_;
    writer_ports ports_;
    iss::log::logger log_;
    open_object_set objects_;  ///< the open and in-flight objects (their entries are `open_object`s)
    commit_ledger ledger_;     ///< what is handled, durable, adopted, re-read, stored
    writer_state state_ = writer_state::running;
    std::string_view stop_reason_;
    clock::system_time last_commit_;
    writer_counters counters_;
    std::mt19937_64 rng_;
    open_object* appended_to_ = nullptr;  ///< the object feed_one appended its message to
    /// The key of the message feed_run ended its run before (offset, key), for feed_one.
    std::optional<std::pair<std::uint64_t, encoded_partition>> lookahead_;
    std::uint64_t budget_shortfall_ = 0;          ///< budget_shortfall()
    std::optional<clock::steady_time> retry_at_;  ///< retry_at()
    unsigned refusals_in_row_ = 0;                ///< group mode: uploads refused since the last success
    /// Group mode, after a failed offset store: the pending offset is not stored again before
    /// this time (the waits grow from s3.retry.base by doubling up to s3.retry.cap with each
    /// failure in a row; a hand-over or stop tries at once); nullopt: no wait.
    std::optional<clock::steady_time> store_retry_at_;
    unsigned store_failures_in_row_ = 0;  ///< group mode: offset stores failed since the last success
    /// The last upload or HEAD failed for good (a refusal, or a certificate that does not verify);
    /// cleared by a success. Group mode backs the partition off while it is set.
    bool last_fatal_ = false;
    /// True while a run is formatted on the worker pool (feed_run): the open objects' buffers
    /// are the pool thread's; buffered_bytes() answers `encoding_snapshot_` meanwhile.
    bool encoding_ = false;
    std::uint64_t encoding_snapshot_ = 0;
};

}  // namespace iss::pipeline
