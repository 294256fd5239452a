#pragma once
// Byte-level BPE: a word's bytes start as one symbol each (through the byte-to-unicode map), then
// the lowest-ranked merge applies first, leftmost on ties, until none applies. Words are cached.
#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tf::text {

struct BpeSettings {
  bool ignore_merges = false;   // a word that is itself in the vocabulary is one token
  int64_t unk_id = -1;          // id for a byte missing from the vocabulary; -1: drop it
  bool fuse_unk = false;        // consecutive unknowns make one unknown
  size_t cache_capacity = 1u << 16;
};

class BpeModel {
 public:
  // vocab[i] = (token string, id); merges in rank order as (left, right) strings. Errors name
  // `where` and the offending token or merge.
  BpeModel(std::vector<std::pair<std::string, uint32_t>> vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, BpeSettings settings,
           const std::string& where);

  // Appends the ids of one pre-tokenized word (raw bytes, before the byte-to-unicode map).
  void encode_word(std::string_view bytes, std::vector<uint32_t>& out) const;

  // Forgets every cached word (for timing the first pass over a text).
  void clear_cache() const;

  // The vocabulary string of an id (byte-level text), or nullptr.
  const std::string* token_of(uint32_t id) const;
  int64_t id_of(std::string_view token) const;
  size_t vocab_entries() const { return vocab_.size(); }
  size_t merge_count() const { return merge_count_; }
  size_t id_limit() const { return by_id_.size(); }  // one past the largest id

 private:
  struct MergeTable;  // (left id, right id) -> (rank, new id)
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Vocab = std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>>;

  void merge_word(std::string_view bytes, std::vector<uint32_t>& out) const;
  bool find_merge(uint32_t left, uint32_t right, uint32_t& rank, uint32_t& new_id) const;

  Vocab vocab_;
  std::vector<const std::string*> by_id_;  // id -> token string in vocab_, nullptr for holes
  std::vector<uint64_t> merge_keys_;        // open addressing: key = left << 32 | right, 0 = empty
  std::vector<std::pair<uint32_t, uint32_t>> merge_values_;
  uint64_t merge_mask_ = 0;
  size_t merge_count_ = 0;
  std::array<int64_t, 256> byte_ids_{};  // id of each byte's single-code-point token, -1 if none
  BpeSettings settings_;

  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<uint32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace tf::text
