// SPDX-License-Identifier: Apache-2.0
#include "admin/request.hpp"

#include "admin/metrics.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/write.hpp>

#include <sstream>

namespace iss::admin {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

admin_response answer(const admin_request& req, const handlers& hs) {
    admin_response res;
    res.version(req.version());
    res.keep_alive(req.keep_alive());
    res.set(http::field::server, "iggy-s3-sink");
    const auto target = std::string_view{req.target().data(), req.target().size()};
    const auto path = target.substr(0, target.find('?'));
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
        res.result(http::status::method_not_allowed);
        res.set(http::field::allow, "GET, HEAD");
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.body() = "only GET and HEAD\n";
    } else if (path == "/metrics") {
        res.result(http::status::ok);
        res.set(http::field::content_type, metrics_content_type);
        res.body() = hs.metrics ? hs.metrics() : std::string{};
    } else if (path == "/healthz") {
        res.result(http::status::ok);
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.body() = "ok\n";
    } else if (path == "/readyz") {
        const auto unmet = hs.unmet ? hs.unmet() : std::vector<std::string>{};
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        if (unmet.empty()) {
            res.result(http::status::ok);
            res.body() = "ready\n";
            if (hs.notes)
                for (const auto& n : hs.notes()) res.body() += n + "\n";
        } else {
            res.result(http::status::service_unavailable);
            for (const auto& u : unmet) res.body() += u + "\n";
        }
    } else {
        res.result(http::status::not_found);
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.body() = "not found: try /metrics, /healthz or /readyz\n";
    }
    res.prepare_payload();
    if (req.method() == http::verb::head) {
        // HEAD: the headers of the GET answer (Content-Length included), no body.
        const auto n = res.body().size();
        res.body().clear();
        res.content_length(n);  // set after prepare_payload: the serializer sends no body
    }
    return res;
}

read_failure classify_read_error(const boost::system::error_code& ec) {
    // A header past the parser's limit, or one that fills the whole read buffer.
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) return read_failure::header_too_large;
    // Everything else the parser reports is input that is not a request we take (a bad
    // method, target, version, field, chunk or a body); the stream's own errors (EOF, reset,
    // timeout, cancellation) and a request cut short leave nothing to answer.
    if (ec.category() == make_error_code(http::error::end_of_stream).category() && ec != http::error::end_of_stream &&
        ec != http::error::partial_message && ec != http::error::need_more)
        return read_failure::bad_request;
    return read_failure::gone;
}

std::optional<admin_response> refusal(read_failure f) {
    if (f == read_failure::gone) return std::nullopt;
    admin_response res;
    res.version(11);
    res.keep_alive(false);
    res.set(http::field::server, "iggy-s3-sink");
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    if (f == read_failure::header_too_large) {
        res.result(http::status::request_header_fields_too_large);
        res.body() = "request header too large\n";
    } else {
        res.result(http::status::bad_request);
        res.body() = "bad request: GET /metrics, /healthz or /readyz over HTTP/1.1\n";
    }
    res.prepare_payload();
    return res;
}

namespace {
std::string serialized(const admin_response& r) {
    std::ostringstream os;
    os << r;
    return std::move(os).str();
}
}  // namespace

std::vector<std::string> respond_each(std::string_view bytes, const handlers& hs, std::size_t max_request_bytes) {
    std::vector<std::string> out;
    for (;;) {
        http::request_parser<http::empty_body> parser;
        parser.header_limit(static_cast<std::uint32_t>(max_request_bytes));
        beast::error_code ec;
        std::size_t used = 0;
        while (!parser.is_done()) {
            const auto rest = bytes.substr(used);
            used += parser.put(net::buffer(rest.data(), rest.size()), ec);
            if (ec) break;
            if (used == bytes.size() && !parser.is_done()) {
                ec = http::error::need_more;
                break;
            }
        }
        // As the server's read buffer (max_request_bytes): input it cannot hold is refused.
        if (ec == http::error::need_more && bytes.size() - used >= max_request_bytes) ec = http::error::buffer_overflow;
        if (ec) {
            if (auto r = refusal(classify_read_error(ec))) out.push_back(serialized(*r));
            return out;
        }
        auto res = answer(parser.get(), hs);
        out.push_back(serialized(res));
        bytes.remove_prefix(used);
        if (!res.keep_alive()) return out;
    }
}

std::string respond(std::string_view bytes, const handlers& hs, std::size_t max_request_bytes) {
    std::string out;
    for (const auto& a : respond_each(bytes, hs, max_request_bytes)) out += a;
    return out;
}

}  // namespace iss::admin
