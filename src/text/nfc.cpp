#include "text/nfc.h"

#include <utf8proc.h>

#include <vector>

#include "text/utf8.h"

namespace tf::text {

bool class_zero_in_reference(uint32_t cp);  // nfc_reference_classes.cpp

namespace {
constexpr uint32_t kHangulS = 0xAC00, kHangulL = 0x1100, kHangulV = 0x1161, kHangulT = 0x11A7;
constexpr uint32_t kHangulLCount = 19, kHangulVCount = 21, kHangulTCount = 28;
constexpr uint32_t kHangulSCount = kHangulLCount * kHangulVCount * kHangulTCount;

bool is_hangul(uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x11FF) || (cp >= kHangulS && cp < kHangulS + kHangulSCount);
}

// A code point NFC can never touch: class 0, no canonical decomposition, never the second of a
// composition. Text splits into independent chunks in front of each one.
bool inert(uint32_t cp) {
  if (cp < 0x300) return true;
  if (is_hangul(cp)) return false;
  const utf8proc_property_t* p = utf8proc_get_property(int32_t(cp));
  if (p->decomp_seqindex != UINT16_MAX && p->decomp_type == 0) return false;
  if (p->comb_index != UINT16_MAX && p->comb_index >= 0x8000) return false;
  return reference_combining_class(cp) == 0;
}

// The primary composite of a + b, or 0.
uint32_t compose_pair(uint32_t a, uint32_t b) {
  if (a >= kHangulL && a < kHangulL + kHangulLCount && b >= kHangulV && b < kHangulV + kHangulVCount)
    return kHangulS + ((a - kHangulL) * kHangulVCount + (b - kHangulV)) * kHangulTCount;
  if (a >= kHangulS && a < kHangulS + kHangulSCount && (a - kHangulS) % kHangulTCount == 0 && b > kHangulT &&
      b < kHangulT + kHangulTCount)
    return a + (b - kHangulT);
  if (utf8proc_get_property(int32_t(b))->comb_index == UINT16_MAX) return 0;
  utf8proc_int32_t pair[2] = {utf8proc_int32_t(a), utf8proc_int32_t(b)};
  const utf8proc_ssize_t n = utf8proc_normalize_utf32(pair, 2, utf8proc_option_t(UTF8PROC_COMPOSE | UTF8PROC_STABLE));
  return n == 1 ? uint32_t(pair[0]) : 0;
}

// NFC of one chunk: canonical decomposition, canonical order, canonical composition (UAX #15).
void normalize_chunk(std::string_view chunk, std::string& out, std::vector<uint32_t>& buf) {
  buf.clear();
  for (size_t i = 0; i < chunk.size();) {
    const uint32_t cp = next_code_point(chunk, i);
    utf8proc_int32_t dec[32];
    int last_boundclass = 0;
    const utf8proc_ssize_t n = utf8proc_decompose_char(int32_t(cp), dec, 32, UTF8PROC_DECOMPOSE, &last_boundclass);
    if (n < 0 || n > 32) {
      buf.push_back(cp);
    } else {
      for (utf8proc_ssize_t k = 0; k < n; ++k) buf.push_back(uint32_t(dec[k]));
    }
  }
  // stable insertion sort of each run of non-zero classes
  std::vector<int> cls(buf.size());
  for (size_t i = 0; i < buf.size(); ++i) cls[i] = reference_combining_class(buf[i]);
  for (size_t i = 1; i < buf.size(); ++i) {
    if (cls[i] == 0) continue;
    for (size_t j = i; j > 0 && cls[j - 1] > cls[j]; --j) {
      std::swap(cls[j - 1], cls[j]);
      std::swap(buf[j - 1], buf[j]);
    }
  }
  size_t w = 0;
  long starter = -1;  // index in buf[0..w) of the last starter
  int last_class = -1;  // class of the last kept character after the starter; -1: none yet
  for (size_t i = 0; i < buf.size(); ++i) {
    const uint32_t c = buf[i];
    const int cc = cls[i];
    const bool blocked = last_class != -1 && (last_class == 0 || last_class >= cc);
    if (starter >= 0 && !blocked) {
      if (uint32_t comp = compose_pair(buf[starter], c)) {
        buf[starter] = comp;
        continue;
      }
    }
    if (cc == 0) {
      starter = long(w);
      last_class = -1;
    } else {
      last_class = cc;
    }
    buf[w] = c;
    cls[w] = cc;
    ++w;
  }
  for (size_t i = 0; i < w; ++i) append_utf8(out, buf[i]);
}
}  // namespace

int reference_combining_class(uint32_t cp) {
  if (cp < 0x300) return 0;
  const int c = utf8proc_get_property(int32_t(cp))->combining_class;
  return c != 0 && class_zero_in_reference(cp) ? 0 : c;
}

bool nfc_unchanged(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    if (!inert(next_code_point(s, i))) return false;
  }
  return true;
}

void append_nfc(std::string_view s, std::string& out) {
  std::vector<uint32_t> buf;
  size_t copied = 0;       // s[0..copied) is in `out`
  size_t chunk_start = 0;  // the current chunk starts at an inert code point (or at 0)
  bool touched = false;    // the current chunk holds a code point NFC may change
  auto emit = [&](size_t end) {
    out.append(s.substr(copied, chunk_start - copied));
    normalize_chunk(s.substr(chunk_start, end - chunk_start), out, buf);
    copied = end;
  };
  for (size_t i = 0; i < s.size();) {
    const size_t at = i;
    const uint32_t cp = static_cast<uint8_t>(s[i]) < 0x80 ? uint32_t(s[i++]) : next_code_point(s, i);
    if (inert(cp)) {
      if (touched) emit(at);  // nothing before `at` can reach past this code point
      touched = false;
      chunk_start = at;
    } else {
      touched = true;
    }
  }
  if (touched)
    emit(s.size());
  else
    out.append(s.substr(copied));
}

}  // namespace tf::text
