// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: bytes a client sends to the admin port, through the server's request path
// (admin/request.hpp `respond_each`: Beast's request parser with the server's header limit, the
// answer or the 400/431 refusal). Properties: every answer is a well-formed HTTP/1.x response
// header (Beast's response parser reads it) with a status the server documents, followed by
// exactly Content-Length bytes of body or none (HEAD); a 400 or 431 is the last answer and says
// `Connection: close`; the same input gives the same answers.
#include "admin/request.hpp"
#include "fuzz_check.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view in{reinterpret_cast<const char*>(data), size};
    iss::admin::handlers h;
    h.metrics = [] { return std::string{"# TYPE x counter\nx 1\n"}; };
    h.unmet = [] { return std::vector<std::string>{"store: not probed usable yet"}; };
    // A small limit, so that short inputs reach the 431 path too.
    constexpr std::size_t limit = 512;
    const auto answers = iss::admin::respond_each(in, h, limit);
    ISS_FUZZ_CHECK(answers == iss::admin::respond_each(in, h, limit));

    for (std::size_t i = 0; i < answers.size(); ++i) {
        const std::string_view a{answers[i]};
        // The header, read by Beast's response parser ...
        http::response_parser<http::string_body> p;
        p.skip(true);
        boost::system::error_code ec;
        const auto used = p.put(boost::asio::buffer(a.data(), a.size()), ec);
        ISS_FUZZ_CHECK(!ec);
        ISS_FUZZ_CHECK(p.is_header_done());
        const auto& res = p.get();
        const unsigned st = res.result_int();
        ISS_FUZZ_CHECK(st == 200 || st == 400 || st == 404 || st == 405 || st == 431 || st == 503);
        // ... then exactly Content-Length bytes of body, or none (the answer to a HEAD).
        ISS_FUZZ_CHECK(p.content_length().has_value());
        const auto body = a.size() - used;
        ISS_FUZZ_CHECK(body == *p.content_length() || body == 0);
        if (st == 400 || st == 431) {
            ISS_FUZZ_CHECK(i + 1 == answers.size());  // nothing after a refusal
            ISS_FUZZ_CHECK(!res.keep_alive());
        }
    }
    return 0;
}
