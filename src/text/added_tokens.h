#pragma once
// Added tokens (special and not) are found before the model sees the text, as the reference
// library finds them: leftmost-longest, non-overlapping; tokens with normalized=false on the raw
// text, those with normalized=true on each normalised piece; single_word, lstrip, rstrip honoured.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tf::text {

class OnigRegex;

struct AddedToken {
  std::string content;
  uint32_t id = 0;
  bool single_word = false, lstrip = false, rstrip = false, normalized = true, special = false;
};

// A piece of text: [begin, end) of the searched string and the added token it is, if any.
struct Piece {
  size_t begin = 0, end = 0;
  int64_t id = -1;  // -1: plain text
};

class AddedTokenMatcher {
 public:
  // `match_text` holds, per token, the string searched for (its content, or NFC of it).
  AddedTokenMatcher(const std::vector<AddedToken>& tokens, const std::vector<std::string>& match_text);
  ~AddedTokenMatcher();
  AddedTokenMatcher(AddedTokenMatcher&&) noexcept;
  AddedTokenMatcher& operator=(AddedTokenMatcher&&) noexcept;

  bool empty() const { return patterns_.empty(); }

  // Splits `text` into plain pieces and added tokens covering it in order; empty text gives one
  // empty plain piece.
  void split(std::string_view text, std::vector<Piece>& out) const;

 private:
  struct Pattern {
    std::string text;
    const AddedToken* token;
  };
  struct Node {
    std::unordered_map<uint8_t, uint32_t> next;
    int32_t pattern = -1;
  };
  size_t longest_at(std::string_view text, size_t pos, int32_t& pattern) const;
  bool is_word(std::string_view ch) const;
  bool is_space(std::string_view ch) const;

  std::vector<AddedToken> tokens_;
  std::vector<Pattern> patterns_;
  std::vector<Node> trie_;
  bool first_byte_[256] = {};
  std::unique_ptr<OnigRegex> word_char_, space_char_;
};

}  // namespace tf::text
