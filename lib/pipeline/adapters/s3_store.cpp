#include "pipeline/adapters/s3_store.hpp"

#include "s3/error.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>

namespace iss::pipeline {

store_status store_status_of(const iss::error& e) {
    switch (s3::status_of(e)) {
        case s3::status::ok: return store_status::ok;
        case s3::status::exists: return store_status::exists;
        case s3::status::not_found: return store_status::not_found;
        case s3::status::retryable: return store_status::retryable;
        case s3::status::fatal: return store_status::fatal;
        case s3::status::cancelled: break;
    }
    throw boost::system::system_error{boost::asio::error::operation_aborted};
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
    return store_result<T>{store_status_of(e), T{}, e.message()};
}
}  // namespace

task<store_result<none>> s3_store::put_object(const object_key& key, std::string_view body, const object_range& range,
                                              std::string_view content_type, bool if_none_match) {
    std::vector<std::string_view> views{body};  // (GCC 12: no braced lists as coroutine arguments)
    auto r = co_await c_.put_object(bucket_, key.get(), std::move(views), options_for(range, content_type, if_none_match));
    if (!r) co_return failed<none>(r.error());
    co_return store_result<none>{};
}

task<store_result<std::string>> s3_store::create_multipart(const object_key& key, const object_range& range,
                                                           std::string_view content_type) {
    auto r = co_await c_.create_multipart(bucket_, key.get(), options_for(range, content_type, false));
    if (!r) co_return failed<std::string>(r.error());
    co_return store_result<std::string>{store_status::ok, std::move(*r), {}};
}

task<store_result<completed_part>> s3_store::upload_part(const object_key& key, const std::string& upload_id,
                                                         int part_number, std::string_view body) {
    std::vector<std::string_view> views{body};
    auto r = co_await c_.upload_part(bucket_, key.get(), upload_id, part_number, std::move(views));
    if (!r) co_return failed<completed_part>(r.error());
    co_return store_result<completed_part>{store_status::ok, completed_part{r->number, r->etag, r->crc32c}, {}};
}

task<store_result<none>> s3_store::complete_multipart(const object_key& key, const std::string& upload_id,
                                                      const std::vector<completed_part>& parts, bool if_none_match) {
    std::vector<s3::completed_part> ps;
    ps.reserve(parts.size());
    for (const auto& p : parts) {
        s3::completed_part q;
        q.number = p.number;
        q.etag = p.etag;
        q.crc32c = p.crc32c;
        ps.push_back(std::move(q));
    }
    auto r = co_await c_.complete_multipart(bucket_, key.get(), upload_id, std::move(ps), if_none_match);
    if (!r) co_return failed<none>(r.error());
    co_return store_result<none>{};
}

task<store_result<none>> s3_store::abort_multipart(const object_key& key, const std::string& upload_id) {
    auto r = co_await c_.abort_multipart(bucket_, key.get(), upload_id);
    if (!r) co_return failed<none>(r.error());
    co_return store_result<none>{};
}

task<store_result<user_metadata>> s3_store::head_object(const object_key& key) {
    auto r = co_await c_.head_object(bucket_, key.get());
    if (!r) co_return failed<user_metadata>(r.error());
    user_metadata m;
    for (auto& [k, v] : r->metadata) m.emplace(k, v);
    co_return store_result<user_metadata>{store_status::ok, std::move(m), {}};
}

}  // namespace iss::pipeline
