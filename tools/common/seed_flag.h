#pragma once
// A --seed flag's text as a 64-bit seed, read as torch.Generator().manual_seed reads one.
#include <cstdint>
#include <string>

namespace tf::tools {

// An integer from -2^63 to 2^64 - 1, a negative one as its two's complement; anything else (CLI11 would
// saturate an overflow to 2^64 - 1 without a word) is an error naming `flag`.
uint64_t parse_seed(const std::string& flag, const std::string& text);

}  // namespace tf::tools
