// SPDX-License-Identifier: Apache-2.0
#include "pipeline/adapters/s3_store.hpp"

#include "s3/error.hpp"

#include <boost/asio/awaitable.hpp>

namespace iss::pipeline {

store_status store_status_of(const iss::error& e) {
    switch (s3::status_of(e)) {
        case s3::status::ok: return store_status::ok;
        case s3::status::exists: return store_status::exists;
        case s3::status::not_found: return store_status::not_found;
        case s3::status::retryable: return store_status::retryable;
        case s3::status::fatal: return store_status::fatal;
    }
    return store_status::fatal;
}

namespace {
s3::put_options options_for(const object_range& range, std::string_view content_type, bool if_none_match) {
    s3::put_options po;
    for (auto& [k, v] : to_user_metadata(range)) po.metadata[k] = v;
    po.content_type = std::string{content_type};
    po.if_none_match = if_none_match;
    return po;
}
template <class T>
store_result<T> failed(const iss::error& e) {
    return store_result<T>{store_status_of(e), T{}, e.message(), s3::answer_code(e)};
}
}  // namespace

task<store_result<none>> s3_store::put_object(const object_key& key, std::string_view body, const object_range& range,
                                              std::string_view content_type, bool if_none_match, body_digests digests) {
    std::vector<std::string_view> views{body};  // (GCC 12: no braced lists as coroutine arguments)
    auto o = options_for(range, content_type, if_none_match);
    o.known = digests;
    auto r = co_await c_.put_object(bucket_, key.get(), std::move(views), std::move(o));
    if (!r) co_return failed<none>(r.error());
    co_return store_result<none>{};
}

task<store_result<none>> s3_store::put_multipart(const object_key& key, std::uint64_t size, std::uint64_t part_size,
                                                 part_reader read, const object_range& range,
                                                 std::string_view content_type, bool if_none_match) {
    s3::client::part_reader parts = [read = std::move(read)](std::uint64_t off,
                                                             std::size_t len) -> result<s3::client::part_body> {
        auto v = read(off, len);
        if (!v) return v.error();
        s3::client::part_body b{v->bytes, v->digests};
        b.sent = std::move(v->sent);
        return b;
    };
    auto r = co_await c_.upload_multipart(bucket_, key.get(), size, part_size, std::move(parts),
                                          options_for(range, content_type, if_none_match));
    if (!r) co_return failed<none>(r.error());
    co_return store_result<none>{};
}

namespace {
class s3_part_hasher final : public part_hasher {
public:
    explicit s3_part_hasher(s3::digest_set which) : d_{which} {}
    void update(std::string_view bytes) noexcept override { d_.update(bytes); }
    body_digests finish() noexcept override { return d_.finish(); }

private:
    s3::body_digester d_;
};
}  // namespace

part_hasher_factory part_hashers_for(const s3::client& c) {
    const s3::digest_set which = c.digests_needed();
    if (!which.any()) return {};
    return [which] { return std::make_unique<s3_part_hasher>(which); };
}

task<store_result<user_metadata>> s3_store::head_object(const object_key& key) {
    auto r = co_await c_.head_object(bucket_, key.get());
    if (!r) co_return failed<user_metadata>(r.error());
    user_metadata m;
    for (auto& [k, v] : r->metadata) m.emplace(k, v);
    co_return store_result<user_metadata>{store_status::ok, std::move(m), {}};
}

}  // namespace iss::pipeline
