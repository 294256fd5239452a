#pragma once
// A compiled Oniguruma regex (UTF-8, Oniguruma's default syntax and no options: as the reference
// library compiles the Split pattern) and its non-overlapping matches.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace tf::text {

class OnigRegex {
 public:
  // Errors name `where` (e.g. the file and key) and Oniguruma's message.
  OnigRegex(const std::string& pattern, const std::string& where);
  ~OnigRegex();
  OnigRegex(const OnigRegex&) = delete;
  OnigRegex& operator=(const OnigRegex&) = delete;

  // Calls on_match(start, end) for each match in order, as the reference's onig find_iter walks
  // them: searching on from each match's end, an empty match right after a match skipped.
  void for_each_match(std::string_view text, const std::function<void(size_t, size_t)>& on_match) const;

  // True when the regex matches somewhere in text[from, to) (searching with the whole text as context).
  bool search(std::string_view text, size_t from, size_t to, size_t* start = nullptr, size_t* end = nullptr) const;

  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  void* regex_ = nullptr;  // OnigRegex (regex_t*)
};

}  // namespace tf::text
