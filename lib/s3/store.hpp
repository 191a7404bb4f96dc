#pragma once
/// \file
/// The object-store face of the client for the pipeline (its `object_store` port maps onto
/// this one call for call): one bucket, outcomes as values. Each call is one S3 operation
/// under the client's retry policy and bounded by `retry.deadline` (the per-operation
/// deadline that group mode keeps under the 30 s hand-over).
///
///     s3::bucket_store store{client, "lake"};
///     auto r = co_await store.put_object(key, body, metadata, "application/x-ndjson", true);
///     if (r.status == s3::status::exists) { auto h = co_await store.head_object(key); ... }
///
/// `status::cancelled` is returned, never thrown; the adapter decides (the pipeline port
/// wants cancellation as an exception).

#include "s3/client.hpp"

namespace iss::s3 {

/// An outcome with a value for `status::ok`.
template <class T>
struct op_result {
    status st = status::ok;
    T value{};
    std::string detail;  ///< the error message (code, request id, attempts, what to check); never a secret
    [[nodiscard]] bool ok() const noexcept { return st == status::ok; }
};
struct nothing {};

/// One bucket of one store. Holds a reference to the client, which must outlive it.
class bucket_store {
public:
    bucket_store(client& c, std::string bucket) : client_{c}, bucket_{std::move(bucket)} {}

    /// PutObject; 412 (If-None-Match: * on an existing key) gives `status::exists`.
    task<op_result<put_result>> put_object(std::string key, std::string_view body, user_metadata metadata,
                                           std::string content_type, bool if_none_match);
    /// CreateMultipartUpload with the final object's metadata; value = upload id.
    task<op_result<std::string>> create_multipart(std::string key, user_metadata metadata, std::string content_type);
    /// UploadPart; value = the part (number, quoted ETag, checksum if any).
    task<op_result<completed_part>> upload_part(std::string key, std::string upload_id, int part_number,
                                                std::string_view body);
    /// CompleteMultipartUpload; 412 gives `status::exists` (where the store honours it).
    task<op_result<complete_result>> complete_multipart(std::string key, std::string upload_id,
                                                        std::vector<completed_part> parts, bool if_none_match);
    /// AbortMultipartUpload.
    task<op_result<nothing>> abort_multipart(std::string key, std::string upload_id);
    /// HeadObject; value = size, ETag and user metadata (lower-case names, decoded values);
    /// `status::not_found` when absent.
    task<op_result<head_result>> head_object(std::string key);
    /// DeleteObject.
    task<op_result<nothing>> delete_object(std::string key);

    [[nodiscard]] const std::string& bucket() const noexcept { return bucket_; }
    [[nodiscard]] client& s3_client() noexcept { return client_; }

private:
    client& client_;
    std::string bucket_;
};

}  // namespace iss::s3
