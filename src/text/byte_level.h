#pragma once
// GPT-2's byte-to-unicode map: every byte gets a printable code point, so byte strings become
// vocabulary strings and back.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tf::text {

// Code point standing for each byte.
const std::array<uint32_t, 256>& byte_to_code_point();

// The byte a code point stands for, or -1 when it stands for none.
int byte_of_code_point(uint32_t cp);

// Bytes -> the UTF-8 of their byte-level code points.
std::string to_byte_level(std::string_view bytes);

// Byte-level text -> bytes; false (and `out` untouched) when some code point stands for no byte.
bool from_byte_level(std::string_view text, std::string& out);

}  // namespace tf::text
