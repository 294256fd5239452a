#pragma once
// UTF-8: validation that names the first bad byte, decoding of valid text, and the lossy decoding
// the reference library applies when token bytes are turned back into text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tf::text {

inline constexpr size_t kValidUtf8 = size_t(-1);

// Byte offset of the first ill-formed sequence (Unicode table 3-7), or kValidUtf8.
size_t first_invalid_utf8(std::string_view s);

// Throws tf::Error "<what>: invalid UTF-8 at byte offset N (byte 0xXX)" when `s` is ill-formed.
void require_valid_utf8(std::string_view s, const std::string& what);

// Decodes one code point of valid UTF-8 at s[i] and advances i.
inline uint32_t next_code_point(std::string_view s, size_t& i) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) {
    i += 1;
    return b0;
  }
  if (b0 < 0xE0) {
    uint32_t cp = (uint32_t(b0 & 0x1F) << 6) | (uint8_t(s[i + 1]) & 0x3F);
    i += 2;
    return cp;
  }
  if (b0 < 0xF0) {
    uint32_t cp = (uint32_t(b0 & 0x0F) << 12) | (uint32_t(uint8_t(s[i + 1]) & 0x3F) << 6) |
                  (uint8_t(s[i + 2]) & 0x3F);
    i += 3;
    return cp;
  }
  uint32_t cp = (uint32_t(b0 & 0x07) << 18) | (uint32_t(uint8_t(s[i + 1]) & 0x3F) << 12) |
                (uint32_t(uint8_t(s[i + 2]) & 0x3F) << 6) | (uint8_t(s[i + 3]) & 0x3F);
  i += 4;
  return cp;
}

void append_utf8(std::string& out, uint32_t cp);

// Valid runs kept, each maximal ill-formed subpart replaced by U+FFFD (as Rust's from_utf8_lossy).
std::string utf8_lossy(std::string_view bytes);

}  // namespace tf::text
