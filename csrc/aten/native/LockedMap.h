// LockedMap.h: a map any thread may read and write, for the borrowed path's registries and caches.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace at::native::openreg {

// Operators are called from any thread, and each registry the borrowed path
// keeps is filled lazily by whichever call first needs an entry: the map
// owns its lock, and every method takes it. Values are returned by copy, so
// no reference outlives the lock. With a `limit`, the map starts over when it
// holds that many entries: a cache of what a model's calls repeat stays small
// whatever a program does.
template <class Key, class Value, class Hash = std::hash<Key>>
class LockedMap {
 public:
  explicit LockedMap(size_t limit = 0) : limit_(limit) {}

  std::optional<Value> find(const Key& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }

  bool contains(const Key& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    return map_.count(key) != 0;
  }

  void set(Key key, Value value) {
    std::lock_guard<std::mutex> lock(mu_);
    if (limit_ != 0 && map_.size() >= limit_) map_.clear();
    map_[std::move(key)] = std::move(value);
  }

 private:
  const size_t limit_;
  mutable std::mutex mu_;
  std::unordered_map<Key, Value, Hash> map_;
};

}  // namespace at::native::openreg
