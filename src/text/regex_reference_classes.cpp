#include "text/regex_reference_classes.h"

#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>

namespace tf::text {

namespace {
using Ranges = std::vector<std::pair<unsigned, unsigned>>;

// Code points the reference's Oniguruma (Unicode 16) matches with \p{L}, \p{M}, \p{N} and Debian
// 12's does not. Listed by python/tools/probe_reference_unicode.py, which asks both engines.
const Ranges kLetters = {
    {0x1c89, 0x1c8a},   {0xa7cb, 0xa7cd},   {0xa7da, 0xa7dc},   {0x105c0, 0x105f3}, {0x10d4a, 0x10d65},
    {0x10d6f, 0x10d85}, {0x10ec2, 0x10ec4}, {0x1123f, 0x11240}, {0x11380, 0x11389}, {0x1138b, 0x1138b},
    {0x1138e, 0x1138e}, {0x11390, 0x113b5}, {0x113b7, 0x113b7}, {0x113d1, 0x113d1}, {0x113d3, 0x113d3},
    {0x11bc0, 0x11be0}, {0x11f02, 0x11f02}, {0x11f04, 0x11f10}, {0x11f12, 0x11f33}, {0x1342f, 0x1342f},
    {0x13441, 0x13446}, {0x13460, 0x143fa}, {0x16100, 0x1611d}, {0x16d40, 0x16d6c}, {0x18cff, 0x18cff},
    {0x1b132, 0x1b132}, {0x1b155, 0x1b155}, {0x1df25, 0x1df2a}, {0x1e030, 0x1e06d}, {0x1e4d0, 0x1e4eb},
    {0x1e5d0, 0x1e5ed}, {0x1e5f0, 0x1e5f0}, {0x2b739, 0x2b739}, {0x2ebf0, 0x2ee5d}, {0x31350, 0x323af},
};
const Ranges kMarks = {
    {0x897, 0x897},     {0xcf3, 0xcf3},     {0xece, 0xece},     {0x10d69, 0x10d6d}, {0x10efc, 0x10eff},
    {0x11241, 0x11241}, {0x113b8, 0x113c0}, {0x113c2, 0x113c2}, {0x113c5, 0x113c5}, {0x113c7, 0x113ca},
    {0x113cc, 0x113d0}, {0x113d2, 0x113d2}, {0x113e1, 0x113e2}, {0x11f00, 0x11f01}, {0x11f03, 0x11f03},
    {0x11f34, 0x11f3a}, {0x11f3e, 0x11f42}, {0x11f5a, 0x11f5a}, {0x13440, 0x13440}, {0x13447, 0x13455},
    {0x1611e, 0x1612f}, {0x1e08f, 0x1e08f}, {0x1e4ec, 0x1e4ef}, {0x1e5ee, 0x1e5ef},
};
const Ranges kNumbers = {
    {0x10d40, 0x10d49}, {0x116d0, 0x116e3}, {0x11bf0, 0x11bf9}, {0x11f50, 0x11f59}, {0x16130, 0x16139},
    {0x16d70, 0x16d79}, {0x1ccf0, 0x1ccf9}, {0x1d2c0, 0x1d2d3}, {0x1e4f0, 0x1e4f9}, {0x1e5f1, 0x1e5fa},
};

// \p{Nd} and \p{Alphabetic} likewise (the reference's single_word check uses \w: Alphabetic, marks, Nd).
const Ranges kDecimalNumbers = {
    {0x10d40, 0x10d49}, {0x116d0, 0x116e3}, {0x11bf0, 0x11bf9}, {0x11f50, 0x11f59}, {0x16130, 0x16139},
    {0x16d70, 0x16d79}, {0x1ccf0, 0x1ccf9}, {0x1e4f0, 0x1e4f9}, {0x1e5f1, 0x1e5fa},
};
const Ranges kAlphabetic = {
    {0x363, 0x36f},     {0x897, 0x897},     {0xc04, 0xc04},     {0xcf3, 0xcf3},     {0xf82, 0xf83},
    {0x1c89, 0x1c8a},   {0x1dd3, 0x1de6},   {0xa7cb, 0xa7cd},   {0xa7da, 0xa7dc},   {0x105c0, 0x105f3},
    {0x10d4a, 0x10d65}, {0x10d69, 0x10d69}, {0x10d6f, 0x10d85}, {0x10ec2, 0x10ec4}, {0x10efc, 0x10efc},
    {0x11080, 0x11081}, {0x1123f, 0x11241}, {0x11380, 0x11389}, {0x1138b, 0x1138b}, {0x1138e, 0x1138e},
    {0x11390, 0x113b5}, {0x113b7, 0x113c0}, {0x113c2, 0x113c2}, {0x113c5, 0x113c5}, {0x113c7, 0x113ca},
    {0x113cc, 0x113cd}, {0x113d1, 0x113d1}, {0x113d3, 0x113d3}, {0x11bc0, 0x11be0}, {0x11f00, 0x11f10},
    {0x11f12, 0x11f3a}, {0x11f3e, 0x11f40}, {0x1342f, 0x1342f}, {0x13441, 0x13446}, {0x13460, 0x143fa},
    {0x16100, 0x1612e}, {0x16d40, 0x16d6c}, {0x18cff, 0x18cff}, {0x1b132, 0x1b132}, {0x1b155, 0x1b155},
    {0x1df25, 0x1df2a}, {0x1e030, 0x1e06d}, {0x1e08f, 0x1e08f}, {0x1e4d0, 0x1e4eb}, {0x1e5d0, 0x1e5ed},
    {0x1e5f0, 0x1e5f0}, {0x2b739, 0x2b739}, {0x2ebf0, 0x2ee5d}, {0x31350, 0x323af},
};

std::string class_items(const Ranges& ranges) {
  std::string s;
  char buf[48];
  for (auto [a, b] : ranges) {
    if (a == b)
      std::snprintf(buf, sizeof buf, "\\x{%X}", a);
    else
      std::snprintf(buf, sizeof buf, "\\x{%X}-\\x{%X}", a, b);
    s += buf;
  }
  return s;
}

const Ranges* ranges_for(std::string_view name) {
  if (name == "L" || name == "Letter") return &kLetters;
  if (name == "M" || name == "Mark") return &kMarks;
  if (name == "N" || name == "Number") return &kNumbers;
  if (name == "Nd" || name == "Decimal_Number") return &kDecimalNumbers;
  if (name == "Alphabetic" || name == "Alpha") return &kAlphabetic;
  return nullptr;
}
}  // namespace

std::string with_reference_unicode_classes(const std::string& pattern) {
  std::string out;
  out.reserve(pattern.size() * 2);
  int class_depth = 0;  // inside [...] (Oniguruma classes nest)
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == 'p' && i + 2 < pattern.size() && pattern[i + 2] == '{') {
        const size_t close = pattern.find('}', i + 3);
        if (close != std::string::npos) {
          const std::string_view name(pattern.data() + i + 3, close - i - 3);
          if (const Ranges* r = ranges_for(name)) {
            const std::string prop = pattern.substr(i, close - i + 1);
            out += class_depth > 0 ? prop + class_items(*r) : "[" + prop + class_items(*r) + "]";
            i = close;
            continue;
          }
        }
      }
      out += c;
      out += pattern[++i];  // an escaped character is never a bracket
      continue;
    }
    if (c == '[') ++class_depth;
    if (c == ']' && class_depth > 0) --class_depth;
    out += c;
  }
  return out;
}

}  // namespace tf::text
