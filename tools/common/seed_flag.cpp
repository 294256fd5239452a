#include "common/seed_flag.h"

#include <charconv>

#include "core/error.h"

namespace tf::tools {

uint64_t parse_seed(const std::string& flag, const std::string& text) {
  const char *first = text.data(), *last = text.data() + text.size();
  std::from_chars_result r{};
  uint64_t seed = 0;
  if (!text.empty() && text[0] == '-') {
    int64_t negative = 0;
    r = std::from_chars(first, last, negative);
    seed = static_cast<uint64_t>(negative);
  } else {
    r = std::from_chars(first, last, seed);
  }
  if (text.empty() || r.ec != std::errc() || r.ptr != last)
    fail(flag + " " + text + ": expected an integer from -9223372036854775808 to 18446744073709551615 "
         "(torch.Generator().manual_seed's range)");
  return seed;
}

}  // namespace tf::tools
