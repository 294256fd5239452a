#pragma once
// The caches a family keeps across calls, written once: work recorded per input layout (on CUDA a
// graph a layout, replayed with one launch), tables whose rows do not depend on their length, and
// values made once per layout.
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace tf {

// Recorded work per key (a pack layout; a picture size and text bucket): a key's first sight runs
// eagerly, its second records the entry and replays it, later sights replay. At most `capacity`
// keys are kept; keys past it always run eagerly.
template <class Key, class Entry>
class RecordedCache {
 public:
  explicit RecordedCache(size_t capacity) : capacity_(capacity) {}

  // False (run eagerly) on a first sight or a key past the capacity. Otherwise, under the cache's
  // lock: record(entry) on the second sight, or again when stale(entry) says its recording no longer
  // applies (other variants), then use(entry); true.
  template <class Record, class Stale, class Use>
  bool replay(const Key& key, Record&& record, Stale&& stale, Use&& use) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slots_.find(key);
    if (it == slots_.end()) {
      if (slots_.size() < capacity_) slots_.emplace(key, Slot{});
      return false;
    }
    Slot& s = it->second;
    if (!s.recorded || stale(std::as_const(s.entry))) {
      record(s.entry);
      s.recorded = true;  // only once the recording succeeded: a throw leaves the key to try again
    }
    use(s.entry);
    return true;
  }

 private:
  struct Slot {
    bool recorded = false;
    Entry entry;
  };
  std::mutex mu_;
  size_t capacity_;
  std::map<Key, Slot> slots_;
};

// Tables whose first n rows do not depend on how many rows were made (RoPE's cos / sin by
// position): the longest asked so far are kept, and a shorter ask takes their first rows.
template <class Tables>
class PrefixTableCache {
 public:
  // make(rows) builds tables of `rows` rows; first(tables, rows) views their first rows.
  template <class Make, class First>
  Tables get(int64_t rows, Make&& make, First&& first) {
    std::lock_guard<std::mutex> lock(mu_);
    if (rows_ < rows) {
      tables_ = make(rows);
      rows_ = rows;
    }
    return first(tables_, rows);
  }

 private:
  std::mutex mu_;
  int64_t rows_ = 0;
  Tables tables_{};
};

// Values made once per key (tables for a pack layout) and kept: at most `capacity` keys, the
// oldest dropped first.
template <class Key, class Value>
class LayoutCache {
 public:
  explicit LayoutCache(size_t capacity) : capacity_(capacity) {}

  // The value of `key`, made by make() on its first sight.
  template <class Make>
  Value get(const Key& key, Make&& make) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [k, v] : slots_)
      if (k == key) return v;
    if (slots_.size() >= capacity_ && !slots_.empty()) slots_.erase(slots_.begin());
    slots_.emplace_back(key, make());
    return slots_.back().second;
  }

 private:
  std::mutex mu_;
  size_t capacity_;
  std::vector<std::pair<Key, Value>> slots_;
};

}  // namespace tf
