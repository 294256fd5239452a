#pragma once
// NFC as the reference library (tokenizers) computes it: utf8proc's decompositions and
// compositions, ordered by the reference's combining classes (see reference_combining_class).
#include <cstdint>
#include <string>
#include <string_view>

namespace tf::text {

// Combining class as the reference library orders marks: utf8proc's, except class 0 for the marks
// the reference's tables predate.
int reference_combining_class(uint32_t cp);

// True when NFC leaves `s` (valid UTF-8) exactly as it is.
bool nfc_unchanged(std::string_view s);

// Appends NFC(s) to `out`; `s` must be valid UTF-8.
void append_nfc(std::string_view s, std::string& out);

inline std::string nfc(std::string_view s) {
  std::string out;
  append_nfc(s, out);
  return out;
}

}  // namespace tf::text
