// SPDX-License-Identifier: Apache-2.0
#include "http/types.hpp"

#include "common/base64.hpp"

#include <algorithm>
#include <charconv>

namespace iss::http {

namespace {
const char* http_message(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::invalid_url: return "invalid URL (expected http[s]://host[:port])";
        case errc::resolve_failed: return "host name lookup failed (check the endpoint host)";
        case errc::connect_failed: return "TCP connect failed (is the server running? check endpoint and port)";
        case errc::tls_handshake_failed: return "TLS handshake failed";
        case errc::certificate_rejected:
            return "server certificate rejected (check the CA file and that the host name matches the certificate)";
        case errc::timeout: return "deadline passed";
        case errc::closed_before_response: return "connection closed before a response arrived";
        case errc::truncated_response: return "connection closed in the middle of the response";
        case errc::bad_response: return "malformed HTTP response";
        case errc::write_failed: return "sending the request failed";
        case errc::tls_setup_failed: return "TLS setup failed (check the CA file)";
    }
    return nullptr;
}

char lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
}  // namespace

const boost::system::error_category& http_category() noexcept {
    static const simple_category cat{"http", http_message};
    return cat;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

void header_list::set(std::string_view name, std::string value) {
    erase(name);
    fields_.emplace_back(std::string{name}, std::move(value));
}

void header_list::erase(std::string_view name) {
    std::erase_if(fields_, [&](const value_type& f) { return iequals(f.first, name); });
}

std::optional<std::string_view> header_list::find(std::string_view name) const noexcept {
    for (const auto& f : fields_)
        if (iequals(f.first, name)) return std::string_view{f.second};
    return std::nullopt;
}

// Built by appending, not with `"[" + host + "]"`: GCC 12 at -O3 reports a false -Wrestrict
// on operator+(const char*, std::string&&) (GCC bug 105329).
std::string endpoint::host_header() const {
    const bool v6 = host.find(':') != std::string::npos;
    std::string h;
    if (v6) h += '[';
    h += host;
    if (v6) h += ']';
    if (port != (tls ? 443 : 80)) {
        h += ':';
        h += std::to_string(port);
    }
    return h;
}

std::string endpoint::to_string() const {
    std::string s = tls ? "https://" : "http://";
    s += host_header();
    if (!connect_host.empty()) {
        s += " (via ";
        s += connect_host;
        s += ')';
    }
    return s;
}

result<endpoint> parse_url(std::string_view url) {
    endpoint ep;
    if (url.starts_with("https://")) {
        ep.tls = true;
        url.remove_prefix(8);
    } else if (url.starts_with("http://")) {
        url.remove_prefix(7);
    } else {
        return error{errc::invalid_url, "scheme must be http or https"};
    }
    const auto slash = url.find_first_of("/?");
    std::string_view authority = url.substr(0, slash);
    if (authority.find('@') != std::string_view::npos) return error{errc::invalid_url, "user info is not allowed"};
    std::string_view port_text;
    if (authority.starts_with('[')) {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) return error{errc::invalid_url, "unclosed IPv6 bracket"};
        ep.host = std::string{authority.substr(1, close - 1)};
        const auto rest = authority.substr(close + 1);
        if (!rest.empty()) {
            if (rest[0] != ':') return error{errc::invalid_url, "junk after IPv6 address"};
            port_text = rest.substr(1);
        }
    } else {
        const auto colon = authority.rfind(':');
        ep.host = std::string{authority.substr(0, colon)};
        if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    }
    if (ep.host.empty()) return error{errc::invalid_url, "empty host"};
    for (char& c : ep.host) c = lower(c);
    if (port_text.empty()) {
        ep.port = ep.tls ? 443 : 80;
    } else {
        unsigned p = 0;
        const auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), p);
        if (ec != std::errc{} || ptr != port_text.data() + port_text.size() || p == 0 || p > 65535)
            return error{errc::invalid_url, "bad port"};
        ep.port = static_cast<std::uint16_t>(p);
    }
    return ep;
}

std::string_view url_path(std::string_view url) noexcept {
    const auto scheme = url.find("://");
    if (scheme == std::string_view::npos) return {};
    url.remove_prefix(scheme + 3);
    const auto slash = url.find('/');
    if (slash == std::string_view::npos) return {};
    url.remove_prefix(slash);
    return url.substr(0, url.find('?'));
}

namespace {

std::string percent_decoded(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            unsigned v = 0;
            const auto [p, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
            if (ec == std::errc{} && p == s.data() + i + 3) {
                out += static_cast<char>(v);
                i += 2;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}

}  // namespace

std::string redact_url(std::string_view url) {
    const auto scheme = url.find("://");
    if (scheme == std::string_view::npos) return std::string{url};
    const auto start = scheme + 3;
    const auto end = url.find_first_of("/?#", start);
    const auto authority = url.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const auto at = authority.rfind('@');
    if (at == std::string_view::npos) return std::string{url};
    const auto userinfo = authority.substr(0, at);
    const auto colon = userinfo.find(':');
    std::string out{url.substr(0, start)};
    out += userinfo.substr(0, colon);
    if (colon != std::string_view::npos) out += ":****";
    out += authority.substr(at);
    if (end != std::string_view::npos) out += url.substr(end);
    return out;
}

bool no_proxy_matches(std::string_view list, std::string_view host, std::uint16_t port) noexcept {
    std::size_t pos = 0;
    while (pos <= list.size()) {
        auto comma = list.find(',', pos);
        std::string_view item =
            list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        pos = comma == std::string_view::npos ? list.size() + 1 : comma + 1;
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
        if (item.empty()) continue;
        if (item == "*") return true;
        // host:port entries match only that port (IPv6 literals come in brackets).
        std::string_view name = item;
        std::optional<unsigned> item_port;
        if (item.starts_with('[')) {
            const auto close = item.find(']');
            name = item.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1);
            if (close != std::string_view::npos && close + 1 < item.size() && item[close + 1] == ':') {
                unsigned v = 0;
                std::from_chars(item.data() + close + 2, item.data() + item.size(), v);
                item_port = v;
            }
        } else if (std::count(item.begin(), item.end(), ':') == 1) {
            const auto colon = item.find(':');
            name = item.substr(0, colon);
            unsigned v = 0;
            std::from_chars(item.data() + colon + 1, item.data() + item.size(), v);
            item_port = v;
        }
        if (item_port && *item_port != port) continue;
        const bool only_subdomains = name.starts_with('.');
        if (name.starts_with("*.")) name.remove_prefix(1);
        if (name.starts_with('.')) name.remove_prefix(1);
        if (name.empty()) continue;
        const bool same = host.size() == name.size() && iequals(host, name);
        const bool sub = host.size() > name.size() && host[host.size() - name.size() - 1] == '.' &&
                         iequals(host.substr(host.size() - name.size()), name);
        if (sub || (same && !only_subdomains)) return true;
    }
    return false;
}

result<std::optional<proxy_route>> route_for(const proxy_options& p, const endpoint& ep) {
    const std::string& url = ep.tls ? p.https_url : p.http_url;
    if (url.empty()) return std::optional<proxy_route>{};
    if (no_proxy_matches(p.no_proxy, ep.host, ep.port)) return std::optional<proxy_route>{};
    std::string_view rest = url;
    if (!rest.starts_with("http://"))
        return error{errc::invalid_url, fmt::format("proxy {}: only http:// proxies are supported", redact_url(url))};
    rest.remove_prefix(7);
    const auto end = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, end);
    proxy_route r;
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
        const auto userinfo = authority.substr(0, at);
        const auto colon = userinfo.find(':');
        const std::string user = percent_decoded(userinfo.substr(0, colon));
        const std::string pass =
            colon == std::string_view::npos ? std::string{} : percent_decoded(userinfo.substr(colon + 1));
        r.authorization = "Basic " + iss::base64_encode(user + ":" + pass);
        authority = authority.substr(at + 1);
    }
    auto pe = parse_url("http://" + std::string{authority});
    if (!pe) return error{errc::invalid_url, fmt::format("proxy {}: {}", redact_url(url), pe.error().message())};
    r.proxy = std::move(*pe);
    return std::optional<proxy_route>{std::move(r)};
}

std::size_t request::body_size() const noexcept {
    std::size_t n = 0;
    for (auto b : body) n += b.size();
    return n;
}

}  // namespace iss::http
