#pragma once
// Seeded random tensors for the tests and benches: the same seed gives the same bytes on every
// machine (std::mt19937 and std::normal_distribution<float>, drawn in element order).
#include <cstdint>
#include <utility>

#include "core/tensor.h"

namespace tf::check {

// A CPU tensor of independent normal(mean, scale) draws, one per element in order, stored as
// `dtype`: F32 as drawn, BF16 rounded to nearest even. Other dtypes are refused.
Tensor random_normal_tensor(DType dtype, Shape shape, uint32_t seed, float scale = 1.0f, float mean = 0.0f);
// The tests' shorthands: F32 and BF16 normal(0, scale) draws.
inline Tensor random_f32(Shape shape, uint32_t seed, float scale = 1.0f) {
  return random_normal_tensor(DType::F32, std::move(shape), seed, scale);
}
inline Tensor random_bf16(Shape shape, uint32_t seed, float scale = 1.0f) {
  return random_normal_tensor(DType::BF16, std::move(shape), seed, scale);
}

}  // namespace tf::check
