#include "text/bpe.h"

#include <queue>

#include "core/error.h"
#include "text/byte_level.h"

namespace tf::text {

namespace {
constexpr uint64_t kEmpty = ~uint64_t(0);
inline uint64_t pair_key(uint32_t a, uint32_t b) { return (uint64_t(a) << 32) | b; }
inline uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}

// A symbol of a word being merged: a doubly linked list over the initial positions.
struct Symbol {
  uint32_t id;
  int32_t prev, next;
  uint32_t len;  // 0: merged into its left neighbour
};

struct Candidate {
  uint32_t rank, pos, new_id;
  bool operator<(const Candidate& o) const {  // priority_queue pops the lowest rank, then leftmost
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};
}  // namespace

BpeModel::BpeModel(std::vector<std::pair<std::string, uint32_t>> vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges, BpeSettings settings,
                   const std::string& where)
    : settings_(settings) {
  vocab_.reserve(vocab.size());
  uint32_t max_id = 0;
  for (auto& [tok, id] : vocab) {
    // a repeated key keeps its last id, as the reference's JSON map does
    vocab_[std::move(tok)] = id;
  }
  for (const auto& [tok, id] : vocab_) max_id = std::max(max_id, id);
  if (max_id >= (1u << 26)) fail(where + ": vocabulary id " + std::to_string(max_id) + " is too large (at most 67108863)");
  by_id_.assign(vocab_.empty() ? 0 : size_t(max_id) + 1, nullptr);
  for (const auto& [tok, id] : vocab_) by_id_[id] = &tok;

  for (int b = 0; b < 256; ++b) {
    const char byte = char(b);
    auto it = vocab_.find(to_byte_level(std::string_view(&byte, 1)));
    byte_ids_[b] = it == vocab_.end() ? -1 : int64_t(it->second);
  }

  size_t cap = 16;
  while (cap < merges.size() * 2 + 16) cap <<= 1;
  merge_keys_.assign(cap, kEmpty);
  merge_values_.assign(cap, {0, 0});
  merge_mask_ = cap - 1;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    auto ia = vocab_.find(a);
    if (ia == vocab_.end()) fail(where + ": merge " + std::to_string(rank) + " (\"" + a + "\" \"" + b + "\"): \"" + a + "\" is not in the vocabulary");
    auto ib = vocab_.find(b);
    if (ib == vocab_.end()) fail(where + ": merge " + std::to_string(rank) + " (\"" + a + "\" \"" + b + "\"): \"" + b + "\" is not in the vocabulary");
    auto ic = vocab_.find(a + b);
    if (ic == vocab_.end()) fail(where + ": merge " + std::to_string(rank) + " (\"" + a + "\" \"" + b + "\"): \"" + a + b + "\" is not in the vocabulary");
    const uint64_t key = pair_key(ia->second, ib->second);
    uint64_t h = mix(key) & merge_mask_;
    while (merge_keys_[h] != kEmpty && merge_keys_[h] != key) h = (h + 1) & merge_mask_;
    if (merge_keys_[h] == kEmpty) ++merge_count_;
    // a repeated pair keeps its last rank, as the reference's map does
    merge_keys_[h] = key;
    merge_values_[h] = {uint32_t(rank), ic->second};
  }
}

bool BpeModel::find_merge(uint32_t left, uint32_t right, uint32_t& rank, uint32_t& new_id) const {
  const uint64_t key = pair_key(left, right);
  uint64_t h = mix(key) & merge_mask_;
  while (true) {
    const uint64_t k = merge_keys_[h];
    if (k == key) {
      rank = merge_values_[h].first;
      new_id = merge_values_[h].second;
      return true;
    }
    if (k == kEmpty) return false;
    h = (h + 1) & merge_mask_;
  }
}

void BpeModel::clear_cache() const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  cache_.clear();
}

const std::string* BpeModel::token_of(uint32_t id) const { return id < by_id_.size() ? by_id_[id] : nullptr; }

int64_t BpeModel::id_of(std::string_view token) const {
  auto it = vocab_.find(token);
  return it == vocab_.end() ? -1 : int64_t(it->second);
}

void BpeModel::merge_word(std::string_view bytes, std::vector<uint32_t>& out) const {
  std::vector<Symbol> sym;
  sym.reserve(bytes.size());
  int64_t pending_unk = -1;  // an unknown waiting to be emitted (fused with the following ones)
  for (char c : bytes) {
    const int64_t id = byte_ids_[static_cast<uint8_t>(c)];
    if (id >= 0) {
      if (pending_unk >= 0) {
        sym.push_back({uint32_t(pending_unk), 0, 0, 1});
        pending_unk = -1;
      }
      sym.push_back({uint32_t(id), 0, 0, 1});
    } else if (settings_.unk_id >= 0) {
      if (pending_unk >= 0 && !settings_.fuse_unk) sym.push_back({uint32_t(pending_unk), 0, 0, 1});
      pending_unk = settings_.unk_id;
    }
  }
  if (pending_unk >= 0) sym.push_back({uint32_t(pending_unk), 0, 0, 1});
  const auto n = int32_t(sym.size());
  for (int32_t i = 0; i < n; ++i) {
    sym[size_t(i)].prev = i - 1;
    sym[size_t(i)].next = i + 1 < n ? i + 1 : -1;
  }
  std::priority_queue<Candidate> queue;
  uint32_t rank, new_id;
  for (int32_t i = 0; i + 1 < n; ++i)
    if (find_merge(sym[size_t(i)].id, sym[size_t(i) + 1].id, rank, new_id)) queue.push({rank, uint32_t(i), new_id});
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& cur = sym[top.pos];
    if (cur.len == 0 || cur.next < 0) continue;
    const Symbol right = sym[size_t(cur.next)];
    // stale when either side changed since the candidate was queued
    if (!find_merge(cur.id, right.id, rank, new_id) || new_id != top.new_id) continue;
    cur.id = top.new_id;
    cur.len += right.len;
    sym[size_t(cur.next)].len = 0;  // the right symbol is gone
    cur.next = right.next;
    if (right.next >= 0) sym[size_t(right.next)].prev = int32_t(top.pos);
    if (cur.prev >= 0 && find_merge(sym[size_t(cur.prev)].id, cur.id, rank, new_id))
      queue.push({rank, uint32_t(cur.prev), new_id});
    if (cur.next >= 0 && find_merge(cur.id, sym[size_t(cur.next)].id, rank, new_id))
      queue.push({rank, top.pos, new_id});
  }
  for (int32_t i = 0; i >= 0 && i < n; i = sym[size_t(i)].next) out.push_back(sym[size_t(i)].id);
}

void BpeModel::encode_word(std::string_view bytes, std::vector<uint32_t>& out) const {
  if (bytes.empty()) return;
  if (bytes.size() == 1 && byte_ids_[static_cast<uint8_t>(bytes[0])] >= 0) {
    out.push_back(uint32_t(byte_ids_[static_cast<uint8_t>(bytes[0])]));
    return;
  }
  if (settings_.ignore_merges) {
    auto it = vocab_.find(to_byte_level(bytes));
    if (it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(bytes);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t first = out.size();
  merge_word(bytes, out);
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() < settings_.cache_capacity)
    cache_.emplace(std::string(bytes), std::vector<uint32_t>(out.begin() + std::ptrdiff_t(first), out.end()));
}

}  // namespace tf::text
