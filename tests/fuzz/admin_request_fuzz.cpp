// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: bytes a client sends to the admin port, through the server's request path
// (admin/request.hpp `respond`: Beast's request parser with the server's header limit, the
// answer or the 400/431 refusal). Properties: the output is a sequence of well-formed HTTP/1.x
// responses (Beast's response parser reads every one of them to its end, nothing left over),
// each with a status the server documents; a 400 or 431 is the last answer and says
// `Connection: close`; the same input gives the same output.
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
    const std::string out = iss::admin::respond(in, h, limit);
    ISS_FUZZ_CHECK(out == iss::admin::respond(in, h, limit));

    std::string_view rest{out};
    bool refused = false;
    while (!rest.empty()) {
        ISS_FUZZ_CHECK(!refused);  // nothing after a 400 or 431
        http::response_parser<http::string_body> p;
        p.eager(true);
        p.body_limit(1 << 20);
        boost::system::error_code ec;
        std::size_t used = 0;
        while (!p.is_done() && !ec && used < rest.size())
            used += p.put(boost::asio::buffer(rest.data() + used, rest.size() - used), ec);
        ISS_FUZZ_CHECK(!ec);
        ISS_FUZZ_CHECK(p.is_done());
        const auto& res = p.get();
        const unsigned st = res.result_int();
        ISS_FUZZ_CHECK(st == 200 || st == 400 || st == 404 || st == 405 || st == 431 || st == 503);
        if (st == 400 || st == 431) {
            refused = true;
            ISS_FUZZ_CHECK(!res.keep_alive());
        }
        rest.remove_prefix(used);
    }
    return 0;
}
