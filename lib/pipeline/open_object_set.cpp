// SPDX-License-Identifier: Apache-2.0
// The open-object set (open_object_set.hpp): the encoded-partition rules' pure decisions.
#include "pipeline/open_object_set.hpp"

#include <algorithm>

namespace iss::pipeline {

open_object_entry* open_object_set::find(std::string_view id) const {
    const auto it = open_.find(id);
    return it == open_.end() ? nullptr : it->second.get();
}

open_object_entry& open_object_set::open(entry_ptr o) {
    auto& ref = *o;
    std::string id = o->encoded;
    open_[std::move(id)] = std::move(o);
    return ref;
}

void open_object_set::discard(std::string_view id) {
    if (const auto it = open_.find(id); it != open_.end()) open_.erase(it);
}

std::vector<std::string> open_object_set::earlier_buckets(std::int64_t bucket) const {
    std::vector<std::string> ids;
    for (const auto& [id, o] : open_)
        if (o->bucket && *o->bucket < bucket) ids.push_back(id);
    return ids;
}

std::optional<std::string> open_object_set::make_room(std::uint32_t max_open) const {
    if (open_.size() < std::max<std::uint32_t>(max_open, 1)) return std::nullopt;
    auto oldest = open_.begin();
    for (auto j = open_.begin(); j != open_.end(); ++j)
        if (j->second->first_offset < oldest->second->first_offset) oldest = j;
    return oldest->first;
}

std::optional<std::string> open_object_set::largest(
    const std::function<std::uint64_t(const open_object_entry&)>& weight) const {
    if (open_.empty()) return std::nullopt;
    auto best = open_.begin();
    for (auto j = open_.begin(); j != open_.end(); ++j)
        if (weight(*j->second) > weight(*best->second)) best = j;
    return best->first;
}

std::vector<std::string> open_object_set::ids() const {
    std::vector<std::string> out;
    out.reserve(open_.size());
    for (const auto& [id, o] : open_) out.push_back(id);
    return out;
}

std::optional<std::uint64_t> open_object_set::lowest_first() const {
    std::optional<std::uint64_t> p;
    for (const auto& [id, o] : open_) p = std::min(p.value_or(o->first_offset), o->first_offset);
    for (const auto& o : closing_) p = std::min(p.value_or(o->first_offset), o->first_offset);
    return p;
}

void open_object_set::close(const std::vector<std::string>& ids) {
    for (const auto& id : ids) {
        auto it = open_.find(id);
        if (it == open_.end()) continue;
        closing_.push_back(std::move(it->second));
        open_.erase(it);
    }
    std::sort(closing_.begin(), closing_.end(),
              [](const entry_ptr& a, const entry_ptr& b) { return a->first_offset < b->first_offset; });
}

void open_object_set::pop_front() { closing_.erase(closing_.begin()); }

void open_object_set::clear() noexcept {
    open_.clear();
    closing_.clear();
}

void open_object_set::for_each(const std::function<void(open_object_entry&)>& f) const {
    for (const auto& [id, o] : open_) f(*o);
    for (const auto& o : closing_) f(*o);
}

void open_object_set::for_each_open(const std::function<void(open_object_entry&)>& f) const {
    for (const auto& [id, o] : open_) f(*o);
}

}  // namespace iss::pipeline
