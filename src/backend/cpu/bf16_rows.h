#pragma once
// Small helpers for CPU kernels on raw bf16 arrays.
#include <cmath>
#include <cstdint>

#include "core/bf16.h"
#include "core/tensor.h"

namespace tf::cpu {

inline float ld(const uint16_t* p, int64_t i) { return float_from_bf16_bits(p[i]); }
inline uint16_t st(float f) { return bf16_bits_from_float(f); }
inline const uint16_t* bf16_ptr(const Tensor& t) { return static_cast<const uint16_t*>(t.data); }
inline uint16_t* bf16_ptr_mut(Tensor& t) { return static_cast<uint16_t*>(t.data); }

// A weight vector stored BF16 or F32, read as float.
inline float ld_weight(const Tensor& w, int64_t i) {
  return w.dtype == DType::F32 ? static_cast<const float*>(w.data)[i] : float_from_bf16_bits(bf16_ptr(w)[i]);
}

// A residual add's d at element i of h: BF16 as stored, or a product's F32 k-share sums [P, rows, n]
// added in share order and rounded to bf16, as the product would have (backend/linear/linear.h).
inline float residual_delta(const Tensor& d, int64_t i) {
  if (d.dtype == DType::BF16) return ld(bf16_ptr(d), i);
  const float* s = static_cast<const float*>(d.data);
  const int64_t stride = d.dim(1) * d.dim(2);
  float sum = s[i];
  for (int64_t p = 1; p < d.dim(0); ++p) sum = sum + s[p * stride + i];
  return float_from_bf16_bits(st(sum));
}

// torch's silu and sigmoid in fp32: x / (1 + exp(-x)), 1 / (1 + exp(-x)).
inline float silu32(float x) { return x / (1.0f + std::exp(-x)); }
inline float sigmoid32(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace tf::cpu
