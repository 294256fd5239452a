#include "text/onig_regex.h"

#include <oniguruma.h>

#include <mutex>

#include "core/error.h"

namespace tf::text {

namespace {
void initialise_onig() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[1] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
  });
}

std::string onig_message(int code, OnigErrorInfo* info) {
  OnigUChar buf[ONIG_MAX_ERROR_MESSAGE_LEN];
  const int n = info ? onig_error_code_to_str(buf, code, info) : onig_error_code_to_str(buf, code);
  return std::string(reinterpret_cast<const char*>(buf), n > 0 ? size_t(n) : 0);
}

struct RegionDeleter {
  void operator()(OnigRegion* r) const { onig_region_free(r, 1); }
};
}  // namespace

OnigRegex::OnigRegex(const std::string& pattern, const std::string& where) : pattern_(pattern) {
  initialise_onig();
  regex_t* reg = nullptr;
  OnigErrorInfo info{};
  const auto* p = reinterpret_cast<const OnigUChar*>(pattern.data());
  const int r = onig_new(&reg, p, p + pattern.size(), ONIG_OPTION_NONE, ONIG_ENCODING_UTF8, ONIG_SYNTAX_DEFAULT, &info);
  if (r != ONIG_NORMAL) fail(where + ": regex does not compile (" + onig_message(r, &info) + "): " + pattern);
  regex_ = reg;
}

OnigRegex::~OnigRegex() {
  if (regex_) onig_free(static_cast<regex_t*>(regex_));
}

bool OnigRegex::search(std::string_view text, size_t from, size_t to, size_t* start, size_t* end) const {
  std::unique_ptr<OnigRegion, RegionDeleter> region(onig_region_new());
  const auto* s = reinterpret_cast<const OnigUChar*>(text.data());
  const int r = onig_search(static_cast<regex_t*>(regex_), s, s + text.size(), s + from, s + to, region.get(),
                            ONIG_OPTION_NONE);
  if (r == ONIG_MISMATCH) return false;
  if (r < 0) fail("regex search failed (" + onig_message(r, nullptr) + "): " + pattern_);
  if (start) *start = size_t(region->beg[0]);
  if (end) *end = size_t(region->end[0]);
  return true;
}

void OnigRegex::for_each_match(std::string_view text, const std::function<void(size_t, size_t)>& on_match) const {
  std::unique_ptr<OnigRegion, RegionDeleter> region(onig_region_new());
  const auto* s = reinterpret_cast<const OnigUChar*>(text.data());
  const auto* e = s + text.size();
  size_t last_end = 0;
  bool have_last = false;
  size_t last_match_end = 0;
  while (last_end <= text.size()) {
    onig_region_clear(region.get());
    const int r = onig_search(static_cast<regex_t*>(regex_), s, e, s + last_end, e, region.get(), ONIG_OPTION_NONE);
    if (r == ONIG_MISMATCH) return;
    if (r < 0) fail("regex search failed (" + onig_message(r, nullptr) + "): " + pattern_);
    const size_t ms = size_t(region->beg[0]), me = size_t(region->end[0]);
    if (ms == me && have_last && last_match_end == me) {
      // step over one code point (or one byte at the end) and search again
      if (last_end < text.size()) {
        const auto b = static_cast<uint8_t>(text[last_end]);
        last_end += b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
      } else {
        last_end += 1;
      }
      continue;
    }
    last_end = me;
    have_last = true;
    last_match_end = me;
    on_match(ms, me);
  }
}

}  // namespace tf::text
