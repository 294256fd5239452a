#include "text/added_tokens.h"

#include "core/error.h"
#include "text/onig_regex.h"
#include "text/regex_reference_classes.h"

namespace tf::text {

namespace {
// Rust's regex \w and \s (Unicode), which the reference uses for single_word, lstrip and rstrip.
constexpr const char* kWord = "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]";
constexpr const char* kSpace = "\\p{White_Space}";
std::string_view first_char(std::string_view s) {
  const auto b = static_cast<uint8_t>(s[0]);
  return s.substr(0, b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4);
}

std::string_view last_char(std::string_view s) {
  size_t i = s.size() - 1;
  while (i > 0 && (static_cast<uint8_t>(s[i]) & 0xC0) == 0x80) --i;
  return s.substr(i);
}
}  // namespace

bool AddedTokenMatcher::is_word(std::string_view ch) const { return word_char_->search(ch, 0, ch.size()); }
bool AddedTokenMatcher::is_space(std::string_view ch) const { return space_char_->search(ch, 0, ch.size()); }

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens, const std::vector<std::string>& match_text)
    : tokens_(tokens) {
  require(tokens.size() == match_text.size(), "added tokens: one match string per token expected");
  trie_.emplace_back();
  bool any_flags = false;
  for (size_t t = 0; t < tokens_.size(); ++t) {
    const std::string& m = match_text[t];
    if (m.empty()) continue;
    patterns_.push_back({m, &tokens_[t]});
    uint32_t node = 0;
    for (char ch : m) {
      const auto b = static_cast<uint8_t>(ch);
      auto it = trie_[node].next.find(b);
      if (it == trie_[node].next.end()) {
        trie_.emplace_back();
        const auto child = uint32_t(trie_.size() - 1);
        trie_[node].next.emplace(b, child);
        node = child;
      } else {
        node = it->second;
      }
    }
    // a repeated string keeps its first token, as the reference's trie keeps one value per key
    if (trie_[node].pattern < 0) trie_[node].pattern = int32_t(patterns_.size() - 1);
    first_byte_[static_cast<uint8_t>(m[0])] = true;
    any_flags |= tokens_[t].single_word || tokens_[t].lstrip || tokens_[t].rstrip;
  }
  if (any_flags) {
    word_char_ = std::make_unique<OnigRegex>(with_reference_unicode_classes(std::string("\\A") + kWord + "\\z"),
                                             "added tokens (single_word)");
    space_char_ = std::make_unique<OnigRegex>(std::string("\\A") + kSpace + "\\z", "added tokens (lstrip, rstrip)");
  }
}

AddedTokenMatcher::~AddedTokenMatcher() = default;
AddedTokenMatcher::AddedTokenMatcher(AddedTokenMatcher&&) noexcept = default;
AddedTokenMatcher& AddedTokenMatcher::operator=(AddedTokenMatcher&&) noexcept = default;

size_t AddedTokenMatcher::longest_at(std::string_view text, size_t pos, int32_t& pattern) const {
  size_t best = 0;
  pattern = -1;
  uint32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto& next = trie_[node].next;
    auto it = next.find(static_cast<uint8_t>(text[i]));
    if (it == next.end()) break;
    node = it->second;
    if (trie_[node].pattern >= 0) {
      best = i + 1 - pos;
      pattern = trie_[node].pattern;
    }
  }
  return best;
}

void AddedTokenMatcher::split(std::string_view text, std::vector<Piece>& out) const {
  if (text.empty() || patterns_.empty()) {
    out.push_back({0, text.size(), -1});
    return;
  }
  size_t done = 0;  // text[0..done) is covered by pieces
  size_t pos = 0;
  while (pos < text.size()) {
    if (!first_byte_[static_cast<uint8_t>(text[pos])]) {
      ++pos;
      continue;
    }
    int32_t pattern = -1;
    const size_t len = longest_at(text, pos, pattern);
    if (len == 0) {
      ++pos;
      continue;
    }
    const AddedToken& tok = *patterns_[size_t(pattern)].token;
    size_t start = pos, stop = pos + len;
    pos = stop;  // the search goes on after the match as found, whatever single_word, lstrip, rstrip do
    if (tok.single_word) {
      const bool space_before = start == 0 || !is_word(last_char(text.substr(0, start)));
      const bool space_after = stop == text.size() || !is_word(first_char(text.substr(stop)));
      if (!space_before || !space_after) continue;
    }
    if (tok.lstrip) {
      size_t s = start;
      while (s > 0 && is_space(last_char(text.substr(0, s)))) s -= last_char(text.substr(0, s)).size();
      start = std::max(s, done);
    }
    if (tok.rstrip) {
      while (stop < text.size() && is_space(first_char(text.substr(stop)))) stop += first_char(text.substr(stop)).size();
    }
    if (done < start) out.push_back({done, start, -1});
    out.push_back({start, stop, int64_t(tok.id)});
    done = stop;
  }
  if (done != text.size()) out.push_back({done, text.size(), -1});
}

}  // namespace tf::text
