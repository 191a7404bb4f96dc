#include "http/types.hpp"

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

std::size_t request::body_size() const noexcept {
    std::size_t n = 0;
    for (auto b : body) n += b.size();
    return n;
}

}  // namespace iss::http
