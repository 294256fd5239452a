#include "text/utf8.h"

#include <cstdio>

#include "core/error.h"

namespace tf::text {

namespace {
// Length of the well-formed sequence starting at s[i], or 0 with `bad_len` = the bytes of its
// maximal ill-formed subpart (at least 1).
size_t well_formed_length(std::string_view s, size_t i, size_t& bad_len) {
  const size_t n = s.size();
  const auto b0 = static_cast<uint8_t>(s[i]);
  bad_len = 1;
  if (b0 < 0x80) return 1;
  size_t len;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= n) {
      bad_len = k;
      return 0;
    }
    const auto b = static_cast<uint8_t>(s[i + k]);
    const uint8_t l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) {
      bad_len = k;
      return 0;
    }
  }
  return len;
}
}  // namespace

size_t first_invalid_utf8(std::string_view s) {
  size_t i = 0, bad = 0;
  while (i < s.size()) {
    // runs of ASCII are the common case
    while (i < s.size() && static_cast<uint8_t>(s[i]) < 0x80) ++i;
    if (i == s.size()) break;
    const size_t len = well_formed_length(s, i, bad);
    if (len == 0) return i;
    i += len;
  }
  return kValidUtf8;
}

void require_valid_utf8(std::string_view s, const std::string& what) {
  const size_t at = first_invalid_utf8(s);
  if (at == kValidUtf8) return;
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<uint8_t>(s[at])));
  fail(what + ": invalid UTF-8 at byte offset " + std::to_string(at) + " (byte " + byte + ")");
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0, bad = 0;
  while (i < bytes.size()) {
    const size_t len = well_formed_length(bytes, i, bad);
    if (len) {
      out.append(bytes.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      i += bad;
    }
  }
  return out;
}

}  // namespace tf::text
