#include "s3/store.hpp"

#include <type_traits>

namespace iss::s3 {

namespace {
template <class T, class V>
op_result<T> to_op(result<V>&& r) {
    op_result<T> out;
    if (!r) {
        out.st = status_of(r.error());
        out.detail = r.error().message();
        return out;
    }
    if constexpr (!std::is_void_v<V>) out.value = std::move(*r);
    return out;
}
}  // namespace

task<op_result<put_result>> bucket_store::put_object(std::string key, std::string_view body, user_metadata metadata,
                                                     std::string content_type, bool if_none_match) {
    put_options o;
    o.metadata = std::move(metadata);
    o.content_type = std::move(content_type);
    o.if_none_match = if_none_match;
    std::vector<std::string_view> views{body};
    auto r = co_await client_.put_object(bucket_, std::move(key), std::move(views), std::move(o));
    co_return to_op<put_result>(std::move(r));
}

task<op_result<std::string>> bucket_store::create_multipart(std::string key, user_metadata metadata,
                                                            std::string content_type) {
    put_options o;
    o.metadata = std::move(metadata);
    o.content_type = std::move(content_type);
    auto r = co_await client_.create_multipart(bucket_, std::move(key), std::move(o));
    co_return to_op<std::string>(std::move(r));
}

task<op_result<completed_part>> bucket_store::upload_part(std::string key, std::string upload_id, int part_number,
                                                          std::string_view body) {
    std::vector<std::string_view> views{body};
    auto r = co_await client_.upload_part(bucket_, std::move(key), std::move(upload_id), part_number, std::move(views));
    co_return to_op<completed_part>(std::move(r));
}

task<op_result<complete_result>> bucket_store::complete_multipart(std::string key, std::string upload_id,
                                                                  std::vector<completed_part> parts, bool if_none_match) {
    auto r = co_await client_.complete_multipart(bucket_, std::move(key), std::move(upload_id), std::move(parts),
                                                 if_none_match);
    co_return to_op<complete_result>(std::move(r));
}

task<op_result<nothing>> bucket_store::abort_multipart(std::string key, std::string upload_id) {
    auto r = co_await client_.abort_multipart(bucket_, std::move(key), std::move(upload_id));
    co_return to_op<nothing>(std::move(r));
}

task<op_result<head_result>> bucket_store::head_object(std::string key) {
    auto r = co_await client_.head_object(bucket_, std::move(key));
    co_return to_op<head_result>(std::move(r));
}

task<op_result<nothing>> bucket_store::delete_object(std::string key) {
    auto r = co_await client_.delete_object(bucket_, std::move(key));
    co_return to_op<nothing>(std::move(r));
}

}  // namespace iss::s3
