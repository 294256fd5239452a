#pragma once
// A diffusion timestep's sinusoidal embedding, as the reference computes it: t = fp32(sigma * scale);
// with half = dim / 2 and f_k = max_period^(-k / half), e = [cos(t f_k) | sin(t f_k)], k < half,
// in float64, then rounded to fp32 and then to bf16 (the reference casts f64 -> f32 -> bf16).
#include "core/tensor.h"

namespace tf {

struct SinusoidOptions {
  float scale = 1000.0f;        // t = fp32(sigma * scale)
  double max_period = 10000.0;  // the lowest frequency's period
};

// sigma: F32 [n]; e: BF16 [n, dim], dim even. Reading sigma from device memory lets a recorded pass
// replay for every step.
void timestep_sinusoid(const Tensor& sigma, const SinusoidOptions& options, Tensor& e);

namespace cpu {
void timestep_sinusoid(const Tensor& sigma, float scale, double max_period, Tensor& e);
}  // namespace cpu
namespace cuda {
void timestep_sinusoid(const Tensor& sigma, float scale, double max_period, Tensor& e);
}  // namespace cuda

}  // namespace tf
