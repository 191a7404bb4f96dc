#include "pipeline/adapters/iggy_ports.hpp"

#include "iggy/error.hpp"
#include "proto/message.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstring>
#include <memory>
#include <mutex>

namespace iss::pipeline {

namespace {
using proto::identifier;
using proto::server_errc;

proto::bytes_view bytes_of(std::string_view s) { return std::as_bytes(std::span{s.data(), s.size()}); }

/// A poll batch copied out of the client's poll buffer.
struct owned_batch {
    std::unique_ptr<std::byte[]> bytes;  ///< `capacity` bytes, not initialised
    std::size_t capacity = 0;
    std::vector<proto::message_view> views;  ///< into `bytes`; never reallocated after filling
};

/// `part` (a view inside `raw`) moved to the same place inside a copy of `raw` at `base`.
proto::bytes_view rebase(proto::bytes_view part, proto::bytes_view raw, const std::byte* base) {
    if (part.empty()) return {};
    const auto at = static_cast<std::size_t>(part.data() - raw.data());
    return proto::bytes_view{base + at, part.size()};
}
}  // namespace

source_status source_status_of(const iss::error& e) noexcept {
    if (iggy::is_server_error(e, server_errc::consumer_group_member_not_found)) return source_status::not_member;
    return iggy::classify(e) == iggy::outcome::retry ? source_status::retryable : source_status::fatal;
}

offset_status offset_status_of(const iss::error& e) noexcept {
    if (iggy::is_server_error(e, server_errc::not_resolved_consumer) ||
        iggy::is_server_error(e, server_errc::consumer_group_member_not_found))
        return offset_status::not_owner;
    return iggy::classify(e) == iggy::outcome::retry ? offset_status::retryable : offset_status::fatal;
}

// Naive version: a fresh buffer per poll. Batches are larger than glibc's mmap threshold
// (fixed at 128 KiB, daemon/main.cpp), so each one is mapped, faulted in page by page,
// zero-filled and unmapped again: in a profile of the end-to-end benchmark, page faults were
// the biggest kernel cost after the socket copies. So the buffers of batches that were let
// go are kept (at most 8 of them, 16 MiB in all) and the next polls copy into them.
class batch_buffers : public std::enable_shared_from_this<batch_buffers> {
public:
    /// A batch with room for `bytes`; when the last reference goes, it comes back here.
    std::shared_ptr<owned_batch> get(std::size_t bytes) {
        owned_batch* b = nullptr;
        {
            const std::lock_guard lock{mu_};
            // The smallest free buffer that is large enough, else the largest one (grown).
            std::size_t pick = free_.size();
            for (std::size_t i = 0; i < free_.size(); ++i) {
                const std::size_t c = free_[i]->capacity;
                if (pick == free_.size()) {
                    pick = i;
                    continue;
                }
                const std::size_t best = free_[pick]->capacity;
                if ((c >= bytes && (best < bytes || c < best)) || (best < bytes && c > best)) pick = i;
            }
            if (pick < free_.size()) {
                b = free_[pick].release();
                free_bytes_ -= b->capacity;
                free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(pick));
            }
        }
        if (!b) b = new owned_batch;
        if (b->capacity < bytes) {
            b->bytes.reset(new std::byte[bytes]);  // (uninitialised: every byte is copied in)
            b->capacity = bytes;
        }
        b->views.clear();
        return std::shared_ptr<owned_batch>{b, [self = shared_from_this()](owned_batch* x) { self->put(x); }};
    }

private:
    void put(owned_batch* b) {
        std::unique_ptr<owned_batch> owned{b};
        const std::lock_guard lock{mu_};
        if (free_.size() >= max_free || free_bytes_ + b->capacity > max_free_bytes) return;  // freed
        free_bytes_ += b->capacity;
        free_.push_back(std::move(owned));
    }
    static constexpr std::size_t max_free = 8;
    static constexpr std::size_t max_free_bytes = 16u << 20;
    std::mutex mu_;  // (batches are let go on the event loop; the lock keeps that an assumption only)
    std::vector<std::unique_ptr<owned_batch>> free_;
    std::size_t free_bytes_ = 0;
};

iggy_ports::iggy_ports(iggy::client& c, iggy_ports_options o)
    : c_{c}, o_{std::move(o)}, buffers_{std::make_shared<batch_buffers>()} {}

proto::consumer iggy_ports::consumer() const {
    return o_.group_mode ? proto::consumer::group(identifier::named(o_.consumer_name))
                         : proto::consumer::single(identifier::named(o_.consumer_name));
}

std::uint64_t iggy_ports::session() const { return c_.generation(); }

task<poll_result> iggy_ports::poll(const topic_ref& t, std::optional<std::uint32_t> partition,
                                   std::optional<std::uint64_t> from, std::uint32_t count) {
    const auto strategy = from ? proto::polling_strategy::at_offset(*from) : proto::polling_strategy::first();
    auto r = co_await c_.poll_messages(consumer(), identifier::named(t.stream), identifier::named(t.topic), partition,
                                       strategy, count, false);
    poll_result out;
    if (!r) {
        out.status = source_status_of(r.error());
        out.detail = iggy::describe(r.error());
        co_return out;
    }
    out.reply.partition = r->partition_id;
    out.reply.current_offset = r->current_offset;
    // The client's poll buffer is overwritten by the next poll on this connection, and the
    // consumer polls several partitions concurrently (each feeds its batch across uploads):
    // copy the batch into storage the reply owns (about one batch per polled partition).
    std::size_t total = 0;
    for (const proto::message_view& v : r->messages) total += v.raw.size();
    auto owned = buffers_->get(total);
    owned->views.reserve(r->messages.size());
    std::size_t pos = 0;
    for (const proto::message_view& src : r->messages) {
        std::byte* base = owned->bytes.get() + pos;
        if (!src.raw.empty()) std::memcpy(base, src.raw.data(), src.raw.size());
        proto::message_view v = src;
        v.raw = proto::bytes_view{base, src.raw.size()};
        v.payload = rebase(src.payload, src.raw, base);
        v.user_headers = rebase(src.user_headers, src.raw, base);
        owned->views.push_back(v);
        pos += src.raw.size();
    }
    out.reply.messages.reserve(owned->views.size());
    for (const proto::message_view& v : owned->views) {
        message m;
        m.offset = v.offset;
        m.timestamp_us = v.timestamp;
        m.origin_timestamp_us = v.origin_timestamp;
        m.id_high = static_cast<std::uint64_t>(v.id >> 64);
        m.id_low = static_cast<std::uint64_t>(v.id);
        m.payload = v.payload;
        m.user_headers = v.user_headers;
        m.view = &v;  // the view lives in `owned`, kept alive by the reply
        out.reply.messages.push_back(m);
    }
    out.reply.storage = std::move(owned);
    co_return out;
}

task<source_status> iggy_ports::join(const topic_ref& t) {
    if (!o_.group_mode) co_return source_status::ok;
    auto r = co_await c_.join_consumer_group(identifier::named(t.stream), identifier::named(t.topic),
                                             identifier::named(o_.consumer_name));
    if (!r && iggy::is_server_error(r.error(), server_errc::consumer_group_id_not_found)) {
        log_.info({iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)}, "creating consumer group {}",
                  o_.consumer_name);
        auto c = co_await c_.create_consumer_group(identifier::named(t.stream), identifier::named(t.topic),
                                                   o_.consumer_name);
        if (!c && iggy::classify(c.error()) == iggy::outcome::fail) {
            // Another member may have created it in between (5004 AlreadyExists): join anyway.
            log_.debug("create consumer group: {}", iggy::describe(c.error()));
        }
        r = co_await c_.join_consumer_group(identifier::named(t.stream), identifier::named(t.topic),
                                            identifier::named(o_.consumer_name));
    }
    if (!r) {
        log_.warn({iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)}, "join {}: {}", o_.consumer_name,
                  iggy::describe(r.error()));
        co_return source_status_of(r.error());
    }
    log_.info({iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)}, "joined consumer group {}",
              o_.consumer_name);
    co_return source_status::ok;
}

task<source_status> iggy_ports::leave(const topic_ref& t) {
    if (!o_.group_mode) co_return source_status::ok;
    auto r = co_await c_.leave_consumer_group(identifier::named(t.stream), identifier::named(t.topic),
                                              identifier::named(o_.consumer_name));
    if (!r) co_return source_status_of(r.error());
    co_return source_status::ok;
}

task<partitions_result> iggy_ports::partitions(const topic_ref& t) {
    // Not logged here: the consumer loop logs an unavailable source once, then at a backoff.
    auto r = co_await c_.get_topic(identifier::named(t.stream), identifier::named(t.topic));
    partitions_result out;
    if (!r) {
        out.status = source_status_of(r.error());
        out.detail = fmt::format("get topic: {}", iggy::describe(r.error()));
        co_return out;
    }
    if (!*r) {
        out.status = source_status::fatal;
        out.detail = "stream or topic not found: check sources[].stream and topics (or create it)";
        co_return out;
    }
    for (const auto& p : (*r)->partitions) out.ids.push_back(p.id);
    co_return out;
}

task<offset_result> iggy_ports::store_offset(const partition_ref& p, std::uint64_t offset) {
    auto r = co_await c_.store_offset(consumer(), identifier::named(p.stream), identifier::named(p.topic), p.partition,
                                      offset);
    if (!r) co_return offset_result{offset_status_of(r.error()), std::nullopt, iggy::describe(r.error())};
    co_return offset_result{offset_status::ok, offset, {}};
}

task<offset_result> iggy_ports::load_offset(const partition_ref& p) {
    auto r = co_await c_.get_offset(consumer(), identifier::named(p.stream), identifier::named(p.topic), p.partition);
    if (!r) co_return offset_result{offset_status_of(r.error()), std::nullopt, iggy::describe(r.error())};
    if (!*r) co_return offset_result{offset_status::ok, std::nullopt, {}};
    co_return offset_result{offset_status::ok, (*r)->stored_offset, {}};
}

task<source_status> iggy_ports::send(const message& m, const partition_ref& source, std::string reason) {
    if (o_.dead_letter.stream.empty()) co_return source_status::fatal;
    // The original headers, then the two of ours (docs/protocol.md §2.6: entries back to back).
    proto::byte_buffer headers(m.user_headers.begin(), m.user_headers.end());
    const std::string src = fmt::format("{}/{}/{}/{}", source.stream, source.topic, source.partition, m.offset);
    if (reason.size() > proto::max_header_field_size) reason.resize(proto::max_header_field_size);
    auto a = proto::append_user_header(headers, proto::header_kind::string, bytes_of("iggy-s3-sink-error"),
                                       proto::header_kind::string, bytes_of(reason));
    auto b = proto::append_user_header(headers, proto::header_kind::string, bytes_of("iggy-s3-sink-source"),
                                       proto::header_kind::string, bytes_of(src));
    if (!a || !b) co_return source_status::fatal;
    iggy::outgoing_message out;
    out.id = (static_cast<proto::u128>(m.id_high) << 64) | m.id_low;
    out.origin_timestamp = m.origin_timestamp_us;
    out.payload = m.payload;
    out.user_headers = headers;
    auto r =
        co_await c_.send_messages(identifier::named(o_.dead_letter.stream), identifier::named(o_.dead_letter.topic),
                                  proto::partitioning::balanced(), std::span{&out, 1});
    if (!r) {
        log_.warn("dead-letter send to {}/{}: {}", o_.dead_letter.stream, o_.dead_letter.topic,
                  iggy::describe(r.error()));
        co_return source_status_of(r.error());
    }
    co_return source_status::ok;
}

}  // namespace iss::pipeline
