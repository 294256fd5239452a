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

// torch's silu and sigmoid in fp32: x / (1 + exp(-x)), 1 / (1 + exp(-x)).
inline float silu32(float x) { return x / (1.0f + std::exp(-x)); }
inline float sigmoid32(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace tf::cpu
