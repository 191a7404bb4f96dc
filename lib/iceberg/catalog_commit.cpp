// SPDX-License-Identifier: Apache-2.0
// The commit loop of the table step (catalog_commit.hpp): build on the table as loaded,
// write the files, commit; on a conflict or an unknown outcome reload and decide.
#include "iceberg/catalog_commit.hpp"

#include "common/log.hpp"

namespace iss::iceberg {

namespace {

const log::logger& logger() {
    static const log::logger l{"iceberg"};
    return l;
}

// Failures after which the table's state must be read again before deciding.
bool reload_and_decide(const error& e) noexcept {
    return e == catalog_errc::commit_conflict || e == catalog_errc::unknown_outcome || e == catalog_errc::unavailable;
}

}  // namespace

task<result<commit_outcome>> commit_batch(catalog_client& catalog, metadata_writer& files, table_ident t,
                                          loaded_table base, batch_plan& plan, unsigned max_attempts) {
    commit_outcome out;
    const std::string name = t.to_string();
    // A batch that the table holds already (a crash after the commit, before the offset was
    // stored) is not committed again.
    auto covered = plan.covered_by(base);
    if (!covered) co_return covered.error();
    if (*covered) {
        out.table = std::move(base);
        out.found_committed = true;
        co_return out;
    }
    while (out.attempts < max_attempts) {
        auto built = co_await plan.build(base);
        if (!built) co_return built.error();
        for (auto& f : built->files) {
            auto w = co_await files.put(std::move(f));
            if (!w) co_return w.error();
        }
        ++out.attempts;
        auto r = co_await catalog.commit(t, std::move(built->body));
        if (r) {
            out.table = std::move(*r);
            co_return out;
        }
        if (!reload_and_decide(r.error())) co_return r.error();
        if (r.error() == catalog_errc::commit_conflict) ++out.conflicts;
        else ++out.unknown_outcomes;
        logger().warn("table {}: {}; reloading to decide", name, r.error().message());
        auto reloaded = co_await catalog.load_table(t);
        if (!reloaded) co_return reloaded.error();
        covered = plan.covered_by(*reloaded);
        if (!covered) co_return covered.error();
        if (*covered) {
            logger().info("table {}: the batch is in snapshot {} already; not committed again", name,
                          reloaded->current_snapshot_id.value_or(-1));
            out.table = std::move(*reloaded);
            out.found_committed = true;
            co_return out;
        }
        base = std::move(*reloaded);
    }
    co_return error{catalog_errc::commit_conflict,
                    fmt::format("table {}: {} commits in a row met a newer table; will try again", name, out.attempts)};
}

}  // namespace iss::iceberg
