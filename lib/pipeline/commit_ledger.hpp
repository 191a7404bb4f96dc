// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The commit ledger of one partition: the pure bookkeeping half of the delivery contract
/// (the essay of delivery.hpp, invariants 1, 3 and 7, rules G2 and G3). It knows which
/// offsets were handled, which encoded partitions are done through an adopted object or
/// wanted again from a re-read point, which delivered objects the stored offset must not
/// fall inside, which durable objects the table step has not taken yet, and what is stored
/// or pending. It decides where to poll from, what a message is (take it, pass over it, or
/// covered), and the commit point. No I/O, no coroutines, no clock: `partition_writer`
/// (delivery*.cpp) feeds it the events it sees and acts on its answers; the unit tests feed
/// it events and check the answers (tests/unit/pipeline/commit_ledger_test.cpp).
///
/// Offsets are Iggy message offsets of one partition; "stored" is the offset given to
/// StoreConsumerOffset (the last message done). Not thread-safe (the event loop's).

#include "pipeline/ports.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iss::pipeline {

/// What to do with a polled message (`commit_ledger::classify`).
enum class intake {
    take,       ///< new: put it in its encoded partition's object (or handle it as bad)
    pass_over,  ///< handled before (held, delivered, skipped) while a re-read passes it: `passed_over`
    covered,    ///< inside an object adopted from an earlier run: done, `handled_through`
};

class commit_ledger {
public:
    /// \param committed the offset stored in Iggy (nullopt: none): polling starts after it.
    explicit commit_ledger(std::optional<std::uint64_t> committed) noexcept;

    // -- Reading ---------------------------------------------------------------------------

    /// The offset to poll from next (nullopt: the partition's first retained offset).
    [[nodiscard]] std::optional<std::uint64_t> next() const noexcept { return next_; }
    /// The highest offset handled (put in an object, skipped, dead-lettered or adopted).
    [[nodiscard]] std::optional<std::uint64_t> handled() const noexcept { return handled_; }
    /// What a polled message at `offset` of encoded partition `encoded` is. \pre offset >= next().
    [[nodiscard]] intake classify(std::string_view encoded, std::uint64_t offset) const;
    /// The same for a message whose encoded partition cannot be read (a bad record time):
    /// `pass_over` while a re-read passes it (it was handled before), else `take`.
    [[nodiscard]] intake classify_unreadable(std::uint64_t offset) const noexcept;
    /// Whether an adoption is being worked through (an encoded partition done through an
    /// adopted object, or re-read): then every message needs its own decision.
    [[nodiscard]] bool adopting() const noexcept { return !reread_from_.empty() || !done_through_.empty(); }
    /// Whether an adopted object of `encoded` holds `offset` (G2).
    [[nodiscard]] bool covered(std::string_view encoded, std::uint64_t offset) const;

    // -- Events of the intake --------------------------------------------------------------

    /// A message passed over by a re-read (`intake::pass_over`): polling goes on after it.
    void passed_over(std::uint64_t offset);
    /// `offset` is handled (covered by an adopted object): the re-read points and adopted
    /// objects it passes are forgotten.
    void handled_through(std::uint64_t offset);
    /// `offset` is handled and polling goes on after it (skipped or dead-lettered).
    void took(std::uint64_t offset);
    /// `offset` went into an object of `encoded` (a re-read of `encoded` moves on with it).
    void appended(std::string_view encoded, std::uint64_t offset);
    /// on_bad_message fail at `offset`: polling would start at it again.
    void stopped_at(std::uint64_t offset) noexcept { next_ = offset; }

    // -- Events of delivery ----------------------------------------------------------------

    /// An object [first, last] was written (200): durable.
    void written(std::uint64_t first, std::uint64_t last);
    /// A 412 on the key of `encoded`'s object [first, ours_last]; the existing one ends at
    /// `theirs_last`. `alone`: one encoded partition per partition, and nothing else open or
    /// in flight. Returns true when the existing object holds less: `encoded` is re-read from
    /// `theirs_last + 1` (next() moves back); else its messages up to `theirs_last` are done.
    bool adopted(std::string_view encoded, std::uint64_t first, std::uint64_t ours_last, std::uint64_t theirs_last,
                 bool alone);
    /// A durable object for the table step (kept only when a step is set).
    void for_table(durable_object o) { untabled_.push_back(std::move(o)); }

    // -- The commit point (G3) and storing -------------------------------------------------

    /// The offset that may be stored now: one below `lowest_held` (the lowest first offset of
    /// the open and in-flight objects; nullopt: none) and the re-read points, lowered to one
    /// below the first offset of any delivered object it falls inside; with none of them the
    /// last handled. nullopt: nothing may be stored.
    [[nodiscard]] std::optional<std::uint64_t> commit_point(std::optional<std::uint64_t> lowest_held) const;
    /// Forgets the delivered objects wholly at or below `point` (the stored offset passed them).
    void forget_through(std::uint64_t point);
    /// Delivered objects remembered (they hold the stored offset back while they overlap open ones).
    [[nodiscard]] std::size_t delivered() const noexcept { return durable_.size(); }
    /// The durable objects wholly at or below `offset` the table step has not taken, in
    /// first-offset order (invariant 7).
    [[nodiscard]] std::vector<durable_object> table_batch(std::uint64_t offset) const;
    /// The table step took every object wholly at or below `offset`.
    void tabled(std::uint64_t offset);
    /// Durable objects the table step has not taken yet.
    [[nodiscard]] std::size_t untabled() const noexcept { return untabled_.size(); }

    [[nodiscard]] std::optional<std::uint64_t> committed() const noexcept { return committed_; }
    [[nodiscard]] std::optional<std::uint64_t> pending() const noexcept { return pending_; }
    /// Whether `offset` is stored already (nothing to do).
    [[nodiscard]] bool stored_through(std::uint64_t offset) const noexcept {
        return committed_ && offset <= *committed_;
    }
    /// StoreConsumerOffset(offset) succeeded.
    void stored(std::uint64_t offset) noexcept;
    /// `offset` is durable but storing it failed (group mode): retried later.
    void store_pending(std::uint64_t offset) noexcept { pending_ = offset; }
    void clear_pending() noexcept { pending_.reset(); }

    /// Everything held was dropped unwritten (reconnect, not owner, give-up): polling goes
    /// back to what is durable (the pending offset, else the stored one). Durable objects at
    /// or below it stay for the table step; the rest is forgotten (a re-read adopts them).
    void dropped();

private:
    /// A re-read reached `offset`, the last handled message: its re-read points and the
    /// adoptions it passed are forgotten.
    void caught_up(std::uint64_t offset);

    struct durable_range {
        std::uint64_t first = 0;
        std::uint64_t last = 0;
    };
    std::optional<std::uint64_t> handled_;
    std::optional<std::uint64_t> next_;
    std::optional<std::uint64_t> committed_;
    std::optional<std::uint64_t> pending_;
    std::vector<durable_range> durable_;  ///< delivered, last > stored offset
    std::vector<durable_object> untabled_;
    std::map<std::string, std::uint64_t, std::less<>> done_through_;  ///< adopted: messages <= are done
    std::map<std::string, std::uint64_t, std::less<>> reread_from_;   ///< rewound: messages >= wanted again
};

}  // namespace iss::pipeline
