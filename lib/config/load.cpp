// SPDX-License-Identifier: Apache-2.0
// YAML -> sink_config: the loader visitor over the schema (schema.hpp).
#include "config/config.hpp"
#include "config/schema.hpp"
#include "config/text_scan.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

namespace iss::config {

namespace {

int line_of(const YAML::Node& n) {
    const auto m = n.Mark();
    return m.line >= 0 ? m.line + 1 : 0;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1);
    std::vector<std::size_t> cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string lower(std::string_view s) {
    std::string out{s};
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

const char* node_kind(const YAML::Node& n) {
    if (n.IsSequence()) return "list";
    if (n.IsMap()) return "mapping";
    return "value";
}

/// Fills a sink_config from a YAML tree, collecting every problem.
/// True when every `${...}` reference in `text` has a default (`${VAR:-...}`); `$${` is a
/// literal. Used on a value that came out empty: then nothing in it was required.
bool only_optional_refs(std::string_view text) {
    for (std::size_t i = text.find("${"); i != std::string_view::npos; i = text.find("${", i + 2)) {
        if (i > 0 && text[i - 1] == '$') continue;
        const auto close = text.find('}', i);
        if (text.substr(i, close == std::string_view::npos ? close : close - i).find(":-") == std::string_view::npos)
            return false;
    }
    return true;
}

class loader {
public:
    loader(const env_lookup& env, loaded& out) : env_{env}, out_{out} {}

    void run(const YAML::Node& root) {
        if (!open_frame(root, "")) return;
        detail::visit_schema(*this, out_.config);
        close_frame();
    }

    template <class F>
    void section(std::string_view key, std::string_view /*help*/, F&& fn) {
        const YAML::Node* n = take(key);
        if (n == nullptr) return;
        if (!open_frame(*n, child_path(key))) return;
        fn();
        close_frame();
    }

    template <class F>
    void optional_section(std::string_view key, std::string_view help, bool& present, F&& fn) {
        present = has(key);
        section(key, help, std::forward<F>(fn));
    }

    template <class T, class F>
    void list(std::string_view key, std::vector<T>& items, std::string_view /*help*/, F&& fn) {
        const YAML::Node* n = take(key);
        if (n == nullptr) return;
        const std::string path = child_path(key);
        if (n->IsNull()) return;
        if (!n->IsSequence()) {
            add(path, fmt::format("must be a list (- item), not a {}", node_kind(*n)), *n);
            return;
        }
        items.clear();
        for (std::size_t i = 0; i < n->size(); ++i) {
            const YAML::Node item = (*n)[i];
            const std::string ipath = fmt::format("{}[{}]", path, i);
            items.emplace_back();
            if (!item.IsMap()) {
                add(ipath, fmt::format("must be a mapping (key: value), not a {}", node_kind(item)), item);
                continue;
            }
            if (!open_frame(item, ipath)) continue;
            fn(items.back());
            close_frame();
        }
    }

    template <class T>
    void field(std::string_view key, T& value, std::string_view /*help*/) {
        const YAML::Node* n = take(key);
        const std::string path = child_path(key);
        std::optional<std::string> text;
        if (n != nullptr) {
            text = scalar(*n, path);
        } else if (!pending_env_.empty()) {
            text = env_ ? env_(pending_env_) : std::nullopt;
        }
        pending_env_.clear();
        if (!text) return;
        const int line = n != nullptr ? line_of(*n) : 0;
        using U = std::remove_cvref_t<T>;
        if constexpr (std::is_same_v<U, std::string>) {
            value = std::move(*text);
        } else if constexpr (detail::is_secret<U>::value) {
            value = U{std::move(*text)};
        } else if constexpr (detail::is_named<U>::value) {
            value = U{std::move(*text)};
        } else if constexpr (std::is_same_v<U, bool>) {
            const std::string l = lower(*text);
            if (l == "true" || l == "yes" || l == "on") value = true;
            else if (l == "false" || l == "no" || l == "off") value = false;
            else add(path, fmt::format("must be true or false, not '{}'", *text), line);
        } else if constexpr (std::is_same_v<U, milliseconds>) {
            auto d = parse_duration(*text);
            if (d) value = *d;
            else add(path, d.error().detail(), line);
        } else if constexpr (std::is_unsigned_v<U>) {
            auto v = parse_uint(*text, std::numeric_limits<U>::max());
            if (v) value = static_cast<U>(*v);
            else add(path, v.error().detail(), line);
        } else {
            static_assert(std::is_same_v<U, void>, "no loader for this field type");
        }
    }

    void size(std::string_view key, std::uint64_t& value, std::string_view /*help*/) {
        const YAML::Node* n = take(key);
        if (n == nullptr) return;
        const std::string path = child_path(key);
        auto text = scalar(*n, path);
        if (!text) return;
        auto v = parse_size(*text);
        if (v) value = *v;
        else add(path, v.error().detail(), *n);
    }

    template <class E>
    void choice(std::string_view key, E& value, std::span<const detail::choice<E>> choices, std::string_view /*help*/) {
        const YAML::Node* n = take(key);
        if (n == nullptr) return;
        const std::string path = child_path(key);
        // YAML reads a plain `null` as a null node: the choice named null (format.avro.codec).
        std::optional<std::string> text;
        if (n->IsNull()) text = "null";
        else text = scalar(*n, path);
        if (!text) return;
        const std::string l = lower(*text);
        for (const auto& c : choices) {
            if (c.name == l) {
                value = c.value;
                return;
            }
        }
        add(path, fmt::format("must be one of {}, not '{}'", detail::choice_names(choices, ", "), *text), *n);
    }

    void strings(std::string_view key, std::vector<std::string>& value, std::string_view /*help*/,
                 std::string_view /*default_text*/ = {}) {
        const YAML::Node* n = take(key);
        if (n == nullptr) return;
        const std::string path = child_path(key);
        value.clear();
        if (n->IsSequence()) {
            for (std::size_t i = 0; i < n->size(); ++i) {
                auto t = scalar((*n)[i], fmt::format("{}[{}]", path, i));
                if (t) value.push_back(std::move(*t));
            }
            return;
        }
        auto t = scalar(*n, path);
        if (t && !t->empty()) value.push_back(std::move(*t));
    }

    void partitions(std::string_view key, bool& all, std::vector<std::uint32_t>& ids, std::string_view /*help*/) {
        const YAML::Node* n = take(key);
        if (n == nullptr) return;
        const std::string path = child_path(key);
        if (n->IsSequence()) {
            all = false;
            ids.clear();
            for (std::size_t i = 0; i < n->size(); ++i) {
                const std::string ipath = fmt::format("{}[{}]", path, i);
                auto t = scalar((*n)[i], ipath);
                if (!t) continue;
                auto v = parse_uint(*t, std::numeric_limits<std::uint32_t>::max());
                if (v) ids.push_back(static_cast<std::uint32_t>(*v));
                else add(ipath, v.error().detail(), (*n)[i]);
            }
            return;
        }
        auto t = scalar(*n, path);
        if (!t) return;
        if (lower(*t) == "all") {
            all = true;
            ids.clear();
            return;
        }
        auto v = parse_uint(*t, std::numeric_limits<std::uint32_t>::max());
        if (v) {
            all = false;
            ids = {static_cast<std::uint32_t>(*v)};
        } else {
            add(path, fmt::format("must be all or a list of partition ids ([0, 1, 2]), not '{}'", *t), *n);
        }
    }

    void pairs(std::string_view key, std::map<std::string, std::string, std::less<>>& value,
               std::string_view /*help*/) {
        const YAML::Node* n = take(key);
        if (n == nullptr || n->IsNull()) return;
        const std::string path = child_path(key);
        if (!n->IsMap()) {
            add(path, fmt::format("must be a mapping (name: value), not a {}", node_kind(*n)), *n);
            return;
        }
        value.clear();
        for (const auto& kv : *n) {
            if (!kv.first.IsScalar()) {
                add(path, "a name must be a plain scalar", kv.first);
                continue;
            }
            auto t = scalar(kv.second, path + "." + kv.first.Scalar());
            if (t) value[kv.first.Scalar()] = std::move(*t);
        }
    }

    /// The next key defaults to env `var`; with `unless`, only while the sibling key `unless`
    /// is absent or comes out empty (`token: ${IGGY_TOKEN:-}` with the variable unset): a
    /// password is not read from the environment beside a token (the environment may hold
    /// both, e.g. one Secret for several daemons).
    void env_default(std::string_view var, std::string_view unless = {}) {
        pending_env_.clear();
        if (!unless.empty() && sibling_set(unless)) return;
        pending_env_ = std::string{var};
    }
    void hide_next(bool) {}

private:
    struct frame {
        std::string path;
        std::vector<std::pair<std::string, YAML::Node>> entries;
        std::vector<bool> used;
        std::vector<std::string> known;
    };

    static result<std::uint64_t> parse_uint(std::string_view s, std::uint64_t max) {
        std::uint64_t v = 0;
        bool any = false;
        for (char c : s) {
            if (c == '_' && any) continue;
            if (c < '0' || c > '9')
                return error{errc::invalid_value, fmt::format("must be a whole number >= 0, not '{}'", s)};
            any = true;
            const auto d = static_cast<std::uint64_t>(c - '0');
            if (v > (max - d) / 10) return error{errc::invalid_value, fmt::format("'{}' is over the limit {}", s, max)};
            v = v * 10 + d;
        }
        if (!any) return error{errc::invalid_value, "must be a whole number >= 0, not empty"};
        return v;
    }

    std::string child_path(std::string_view key) const {
        const std::string& p = frames_.back().path;
        return p.empty() ? std::string{key} : p + "." + std::string{key};
    }

    void add(std::string path, std::string message, int line) {
        out_.problems.push_back(problem{std::move(path), std::move(message), line});
    }
    void add(std::string path, std::string message, const YAML::Node& n) {
        add(std::move(path), std::move(message), line_of(n));
    }

    bool open_frame(const YAML::Node& n, std::string path) {
        frame f;
        f.path = std::move(path);
        if (!n.IsNull()) {
            if (!n.IsMap()) {
                add(f.path,
                    fmt::format("{}must be a mapping (key: value), not a {}", f.path.empty() ? "the file " : "",
                                node_kind(n)),
                    n);
                return false;
            }
            for (const auto& kv : n) {
                // YAML reads the plain key `null` (format.csv.null) as a null node: take it by
                // its name. Sequences and mappings as keys stay errors.
                if (!kv.first.IsScalar() && !kv.first.IsNull()) {
                    add(f.path, "a key must be a plain name", kv.first);
                    continue;
                }
                std::string k = kv.first.IsNull() ? std::string{"null"} : kv.first.Scalar();
                const bool dup =
                    std::any_of(f.entries.begin(), f.entries.end(), [&](const auto& e) { return e.first == k; });
                if (dup) {
                    add(f.path.empty() ? k : f.path + "." + k,
                        "duplicate key: YAML would silently keep only one of them", kv.first);
                    continue;
                }
                f.entries.emplace_back(std::move(k), kv.second);
            }
        }
        f.used.assign(f.entries.size(), false);
        frames_.push_back(std::move(f));
        return true;
    }

    void close_frame() {
        frame& f = frames_.back();
        for (std::size_t i = 0; i < f.entries.size(); ++i) {
            if (f.used[i]) continue;
            const std::string& k = f.entries[i].first;
            std::string best;
            std::size_t best_d = 3;
            const std::string lk = lower(k);
            for (const auto& known : f.known) {
                // The distance is at least the difference in length: most keys are out at once.
                const std::size_t gap = lk.size() > known.size() ? lk.size() - known.size() : known.size() - lk.size();
                if (gap >= best_d) continue;
                const auto d = edit_distance(lk, known);
                if (d < best_d) {
                    best_d = d;
                    best = known;
                }
            }
            std::string msg = "unknown key";
            if (!best.empty()) msg += fmt::format(" (did you mean {}?)", best);
            else if (!f.known.empty()) {
                msg += "; known keys here:";
                for (const auto& known : f.known) msg += " " + known;
            }
            add(f.path.empty() ? k : f.path + "." + k, std::move(msg), line_of(f.entries[i].second));
        }
        frames_.pop_back();
    }

    /// The node of `key` in the current mapping, marked used; nullptr when absent.
    /// True when the current mapping has `key` (without marking it read).
    bool has(std::string_view key) const {
        for (const auto& e : frames_.back().entries)
            if (e.first == key) return true;
        return false;
    }

    /// True when the current mapping sets `key` to something other than an empty value (a
    /// value whose `${VAR}` cannot be expanded counts as set: its own field reports it).
    bool sibling_set(std::string_view key) const {
        for (const auto& e : frames_.back().entries) {
            if (e.first != key) continue;
            if (e.second.IsNull()) return false;
            if (!e.second.IsScalar()) return true;
            const auto text = interpolate(e.second.Scalar(), env_);
            return !text || !text->empty();
        }
        return false;
    }

    const YAML::Node* take(std::string_view key) {
        frame& f = frames_.back();
        f.known.emplace_back(key);
        for (std::size_t i = 0; i < f.entries.size(); ++i) {
            if (f.entries[i].first != key) continue;
            f.used[i] = true;
            const std::string path = child_path(key);
            out_.set_paths.insert(path);
            out_.lines[path] = line_of(f.entries[i].second);
            return &f.entries[i].second;
        }
        return nullptr;
    }

    std::optional<std::string> scalar(const YAML::Node& n, const std::string& path) {
        if (n.IsNull()) return std::string{};
        if (!n.IsScalar()) {
            add(path, fmt::format("must be a single value, not a {}", node_kind(n)), n);
            return std::nullopt;
        }
        auto r = interpolate(n.Scalar(), env_);
        if (!r) {
            add(path, r.error().detail(), n);
            return std::nullopt;
        }
        if (r->empty() && n.Scalar().find("${") != std::string::npos)
            (only_optional_refs(n.Scalar()) ? emptied_optional : emptied_by_env).insert(path);
        return std::move(*r);
    }

public:
    /// Paths whose value came out empty through a `${VAR}` reference without a default.
    std::set<std::string> emptied_by_env;
    /// Paths whose value came out empty only through `${VAR:-}` references (VAR unset or "").
    std::set<std::string> emptied_optional;

private:
    const env_lookup& env_;
    loaded& out_;
    std::vector<frame> frames_;
    std::string pending_env_;
};

}  // namespace

loaded parse(std::string_view yaml, const env_lookup& env) {
    loaded out;
    const detail::text_scan scan = detail::scan_text(yaml);
    if (scan.unclosed_quote != 0) {
        // Nothing of the file is read: the lines after the quote would be one value, and a
        // message quoting it would print whatever secrets they hold.
        out.problems.push_back(problem{
            "",
            fmt::format("YAML syntax: the quoted value that starts on line {} is never closed: add the closing {} "
                        "on that line",
                        scan.unclosed_quote_line, scan.unclosed_quote),
            scan.unclosed_quote_line});
        return out;
    }
    YAML::Node root;
    try {
        root = YAML::Load(std::string{yaml});
    } catch (const YAML::Exception& e) {
        std::string msg = fmt::format("YAML syntax: {}", e.msg);
        if (yaml.find("\n\t") != std::string_view::npos || yaml.starts_with('\t'))
            msg += " (YAML does not allow tabs for indentation; use spaces)";
        int at = e.mark.line >= 0 ? e.mark.line + 1 : 0;
        if (const auto& ref = scan.env_ref_in_flow) {
            msg += fmt::format(
                "; {} on line {} is inside a flow collection ({{...}} or [...]), where braces are YAML syntax: the "
                "value must be quoted (\"{}\")",
                ref->first, ref->second, ref->first);
            at = ref->second;
        }
        out.problems.push_back(problem{"", std::move(msg), at});
        return out;
    }
    loader l{env, out};
    // The loader visits the schema with env defaults even when a section is absent, so run
    // it on an empty mapping when the file is empty.
    l.run(root);
    // Keys whose defaults come from the environment still apply when their whole section
    // is absent from the file.
    if (!out.set_paths.contains("iggy") && env) {
        if (auto v = env("IGGY_PASSWORD")) out.config.iggy.password = iggy_password{*v};
    }
    if (!out.set_paths.contains("s3") && env) {
        if (auto v = env("AWS_ACCESS_KEY_ID")) out.config.s3.access_key_id = access_key_id{*v};
        if (auto v = env("AWS_SECRET_ACCESS_KEY")) out.config.s3.secret_access_key = secret_access_key{*v};
        if (auto v = env("AWS_SESSION_TOKEN")) out.config.s3.session_token = session_token{*v};
    }
    // AWS credentials from the environment come as a set, as in the AWS SDKs: with an access
    // key id written in the file, a secret or session token of another identity must not be
    // picked up from the environment (the store would answer InvalidToken or a signature
    // mismatch that is hard to trace).
    // A key whose `${VAR}` comes out empty (`${AWS_ACCESS_KEY_ID}` with the variable set to
    // "") is a mistake, not a request for the credential chain: the chain would then find
    // other credentials, or none, far from the cause. A literal "" stays "none" (the printed
    // effective config writes unset keys so).
    // `${AWS_ACCESS_KEY_ID:-}` with the variable unset (or "") is the "may be unset" form: the
    // key is not given, as if absent, so the chain finds a role (instance profile, IRSA, Pod
    // Identity) with the same file.
    for (const char* path : {"s3.access_key_id", "s3.secret_access_key", "s3.session_token"})
        if (l.emptied_optional.contains(path)) out.set_paths.erase(path);
    const auto written_empty = [&](const char* path, bool empty) {
        if (l.emptied_by_env.contains(path) && empty)
            out.problems.push_back(
                problem{path,
                        "is empty: the variable it reads is set to \"\"; set the variable, or write ${VAR:-} or "
                        "remove the key to use the credential chain (s3.credentials.source)",
                        out.lines[path]});
    };
    written_empty("s3.access_key_id", out.config.s3.access_key_id.get().empty());
    written_empty("s3.secret_access_key", out.config.s3.secret_access_key.empty());
    if (out.set_paths.contains("s3.access_key_id")) {
        if (!out.set_paths.contains("s3.secret_access_key")) out.config.s3.secret_access_key = {};
        if (!out.set_paths.contains("s3.session_token")) out.config.s3.session_token = {};
    } else if (!out.config.s3.access_key_id.get().empty()) {
        out.config.s3.keys_from_env = true;  // the credentials chain names them `env`
    }
    if (out.set_paths.contains("iggy.consumer") && out.set_paths.contains("iggy.consumer_group")) {
        out.problems.push_back(problem{"iggy.consumer",
                                       "set either consumer_group (group mode) or consumer (single consumer), not both",
                                       out.lines["iggy.consumer"]});
    }
    return out;
}

loaded load_file(const std::string& file, const env_lookup& env) {
    if (std::error_code ec; std::filesystem::is_directory(file, ec)) {
        loaded out;  // an ifstream opens a directory and reads nothing: an empty file's problems
        out.problems.push_back(problem{"", fmt::format("cannot read {}: it is a directory (give the file)", file), 0});
        return out;
    }
    std::ifstream in{file, std::ios::binary};
    if (!in) {
        loaded out;
        out.problems.push_back(problem{"", fmt::format("cannot read {}: {}", file, std::strerror(errno)), 0});
        return out;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse(ss.str(), env);
}

std::vector<problem> check(loaded& l) {
    std::vector<problem> all = l.problems;
    // A file that could not be read or parsed has nothing to validate: its defaults would
    // only bury the one problem that matters.
    if (std::any_of(l.problems.begin(), l.problems.end(), [](const problem& q) { return q.path.empty(); })) return all;
    for (auto p : validate(l.config)) {
        // A key that could not be read already has its problem; its default would only add noise.
        if (std::any_of(l.problems.begin(), l.problems.end(), [&](const problem& q) { return q.path == p.path; }))
            continue;
        // Place the problem at the line of its key, or of the nearest enclosing key.
        std::string path = p.path;
        while (!path.empty() && p.line == 0) {
            if (auto it = l.lines.find(path); it != l.lines.end()) p.line = it->second;
            const auto cut = path.find_last_of(".[");
            path = cut == std::string::npos ? std::string{} : path.substr(0, cut);
        }
        all.push_back(std::move(p));
    }
    return all;
}

}  // namespace iss::config
