#include "text/byte_level.h"

#include "text/utf8.h"

namespace tf::text {

namespace {
struct Maps {
  std::array<uint32_t, 256> to_cp{};
  std::array<int16_t, 512> to_byte{};  // every mapped code point is below 0x144
  Maps() {
    to_byte.fill(-1);
    auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
    uint32_t next = 256;  // bytes without a printable self go to 256, 257, ... in byte order
    for (int b = 0; b < 256; ++b) to_cp[b] = printable(b) ? uint32_t(b) : next++;
    for (int b = 0; b < 256; ++b) to_byte[to_cp[b]] = int16_t(b);
  }
};
const Maps& maps() {
  static const Maps m;
  return m;
}
}  // namespace

const std::array<uint32_t, 256>& byte_to_code_point() { return maps().to_cp; }

int byte_of_code_point(uint32_t cp) { return cp < 512 ? maps().to_byte[cp] : -1; }

std::string to_byte_level(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  const auto& m = maps().to_cp;
  for (char c : bytes) append_utf8(out, m[static_cast<uint8_t>(c)]);
  return out;
}

bool from_byte_level(std::string_view text, std::string& out) {
  std::string bytes;
  bytes.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const int b = byte_of_code_point(next_code_point(text, i));
    if (b < 0) return false;
    bytes.push_back(char(b));
  }
  out += bytes;
  return true;
}

}  // namespace tf::text
