#pragma once
// bfloat16 storage and torch's float -> bf16 rounding (round to nearest, ties to even; NaN stays NaN).
#include <bit>
#include <cstdint>
#include <cstring>

namespace tf {

struct bf16 {
  uint16_t bits = 0;
};

inline uint16_t bf16_bits_from_float(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  uint32_t lsb = (u >> 16) & 1u;
  u += 0x7fffu + lsb;
  return static_cast<uint16_t>(u >> 16);
}

inline float float_from_bf16_bits(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

inline bf16 to_bf16(float f) { return bf16{bf16_bits_from_float(f)}; }
inline float to_float(bf16 b) { return float_from_bf16_bits(b.bits); }

// The value a float takes after one rounding to bf16.
inline float round_bf16(float f) { return float_from_bf16_bits(bf16_bits_from_float(f)); }

// IEEE half (F16) to float, for reading F16 checkpoints.
inline float float_from_f16_bits(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    if (man == 0) {
      u = sign;
    } else {
      int e = -1;
      do { ++e; man <<= 1; } while ((man & 0x400u) == 0);
      u = sign | ((127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (man << 13);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  return std::bit_cast<float>(u);
}

}  // namespace tf
