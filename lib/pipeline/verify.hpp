// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `iggy-s3-sink verify`: what the bucket holds for one partition, checked against the
/// offset committed in Iggy. Pure: the command lists and HEADs the objects, this file judges.
///
/// Every object carries its range (`x-amz-meta-iggy-first-offset` / `-last-offset`). Sorted
/// by first offset, consecutive ranges must touch: a hole between two objects is a gap, an
/// offset inside two objects an overlap (a duplicate in the bucket). The partition is fine
/// when every offset from the lowest one present up to the committed offset is in exactly
/// one object: no gap below the committed offset, no overlap anywhere, and no committed
/// offset beyond the highest durable one (committed but not in the bucket: lost). Objects
/// above the committed offset are normal (durable, commit pending) and are reported only.
///
/// (An object's `-count` may be below its span: skipped and dead-lettered messages are
/// covered by the object around them without being in it. Coverage therefore uses ranges.)
///
/// A bad message that no open object surrounds (the first after an object closed, the last
/// of a partition, or the one a stopped partition is restarted past with a new
/// `delivery.on_bad_message`) is in no object's range: its offset is covered only by the
/// offset stored in Iggy. The record that it was passed on purpose is the message itself: the
/// format refuses it, so no object could hold it, and only `skip` or `dead_letter` moves the
/// stored offset past it (`fail` stops before it). So the command reads the messages of each
/// gap from Iggy and asks the format (`refused_by_format`, the test `run` applies);
/// `account_refused` takes the refused offsets out of the problems and counts them. An offset
/// whose message the format accepts, or that Iggy no longer holds, stays a gap.

#include "pipeline/ports.hpp"
#include "pipeline/types.hpp"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace iss::pipeline {

/// One object as listed and HEADed.
struct verified_object {
    std::string key;
    object_range range;
};

/// An offset range [first, last] and the two objects around it.
struct offset_span {
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    std::string before;  ///< the object that ends before (gap) or the first holder (overlap); may be empty
    std::string after;   ///< the object that starts after (gap) or the second holder (overlap); may be empty
};

struct partition_report {
    partition_ref partition;
    std::size_t objects = 0;
    std::optional<std::uint64_t> lowest;           ///< lowest offset in the bucket
    std::optional<std::uint64_t> highest;          ///< highest durable offset
    std::optional<std::uint64_t> committed;        ///< stored in Iggy
    std::vector<offset_span> gaps;                 ///< below the committed offset (or between objects)
    std::vector<offset_span> overlaps;             ///< offsets in two objects
    std::optional<offset_span> committed_missing;  ///< committed but in no object: highest+1 .. committed
    std::vector<std::string> unreadable;           ///< objects without usable iggy-* metadata
    /// Offsets in no object because the format refused their messages (skipped or
    /// dead-lettered by delivery.on_bad_message): accounted for, not gaps (account_refused).
    std::uint64_t refused = 0;
    /// Table data files whose row count (the manifest's `record_count`) is not the object's
    /// `x-amz-meta-iggy-count`, one sentence each.
    std::vector<std::string> miscounted;

    [[nodiscard]] bool ok() const noexcept {
        return gaps.empty() && overlaps.empty() && !committed_missing && unreadable.empty() && miscounted.empty();
    }
};

/// Judges one partition's objects (any order) against its committed offset.
[[nodiscard]] partition_report verify_partition(partition_ref p, std::vector<verified_object> objects,
                                                std::optional<std::uint64_t> committed,
                                                std::vector<std::string> unreadable = {});

/// The offset spans of `r` that no object holds (its gaps, then the committed-but-missing
/// span): what the command reads from Iggy to find the refused messages among them.
[[nodiscard]] std::vector<offset_span> unaccounted_spans(const partition_report& r);

/// Whether `m` is a bad message, as `run` decides it (delivery.cpp feed_one): the key namer
/// cannot place it (a record time or key field it cannot read) or the format's encoder
/// refuses it (invalid JSON with format.payload json, a schema mismatch). `encoder` is reused
/// across calls and replaced after a refusal or once its output passes 1 MiB.
[[nodiscard]] bool refused_by_format(const key_namer& namer, const encoder_factory& encoders,
                                     std::unique_ptr<record_encoder>& encoder, std::string& buf, const partition_ref& p,
                                     const message& m);

/// Takes `refused` (offsets whose messages the format refuses) out of `r`'s gaps (a gap may
/// split in two) and committed-but-missing span, and counts those it took in `r.refused`.
void account_refused(partition_report& r, const std::set<std::uint64_t>& refused);

/// One data file of an Iceberg table's current snapshot (`verify` with `iceberg` set): listed
/// by the manifests, its range HEADed.
struct verified_table_file {
    std::string key;
    /// The partition value's path (the key's folder): the files of one value hold consecutive
    /// messages of that value, so they never overlap; files of different values interleave.
    std::string group;
    object_range range;
    std::int64_t record_count = 0;  ///< the manifest's `record_count`
};

/// Judges one partition's data files against the offset the table's summary holds (its
/// `iggy-s3-sink.offsets` minus one): a gap where no file's range covers an offset up to it;
/// an overlap where two files of one group cover the same offset (the same file registered
/// twice, or a value's messages in two files: rows twice in the table); a file whose row count
/// is not its object's count. Files of different groups may cover the same offsets (their
/// messages interleave); which rows of a range a file holds is not read.
[[nodiscard]] partition_report verify_table_partition(partition_ref p, std::vector<verified_table_file> files,
                                                      std::optional<std::uint64_t> committed,
                                                      std::vector<std::string> unreadable = {});

/// One line per problem ("app/events/0: gap: offsets 10..19 are in no object (after KEY, before KEY)").
[[nodiscard]] std::vector<std::string> describe_problems(const partition_report& r);
/// Column table: STREAM TOPIC PARTITION OBJECTS LOWEST HIGHEST COMMITTED GAPS OVERLAPS STATUS.
[[nodiscard]] std::string render_verify_table(const std::vector<partition_report>& rs);
/// `{"partitions":[{"stream":..,"topic":..,"partition":..,"objects":..,"lowest":..|null,
/// "highest":..|null,"committed":..|null,"gaps":[[a,b],..],"overlaps":[[a,b],..],"refused":N,
/// "ok":true}],
/// "problems":[".."],"problem_count":N,"notes":[".."],"note_count":N,"ok":true}` on one line
/// (problems and notes: the first `max_problems` of each). `notes`: what is reported without
/// being a problem (an Iceberg table's data files another writer added, by `s3://` path).
[[nodiscard]] std::string render_verify_json(const std::vector<partition_report>& rs, std::size_t max_problems,
                                             const std::vector<std::string>& notes = {});

}  // namespace iss::pipeline
