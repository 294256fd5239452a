// CPU kernels of a sampling step's element-wise work: latents to token rows, the guided Euler update.
#include <algorithm>

#include "backend/elementwise/guided_euler_step.h"
#include "backend/elementwise/transpose_to_bf16.h"
#include "core/bf16.h"
#include "core/parallel.h"

namespace tf::cpu {

void transpose_to_bf16(const Tensor& x, Tensor& y) {
  const int64_t R = x.dim(0), K = x.dim(1);
  const float* src = x.ptr<const float>();
  uint16_t* dst = y.ptr<uint16_t>();
  constexpr int64_t kTile = 32;  // tiles keep both sides' cache lines in use
  parallel_for((K + kTile - 1) / kTile, [&](int64_t b, int64_t e) {
    for (int64_t k0 = b * kTile; k0 < std::min(K, e * kTile); k0 += kTile)
      for (int64_t r0 = 0; r0 < R; r0 += kTile)
        for (int64_t k = k0; k < std::min(K, k0 + kTile); ++k)
          for (int64_t r = r0; r < std::min(R, r0 + kTile); ++r) dst[k * R + r] = bf16_bits_from_float(src[r * K + k]);
  });
}

void guided_euler_step(Tensor& x, const Tensor& cond, const Tensor* uncond, const Tensor& scalars) {
  const int64_t C = x.dim(0), n = x.dim(1);
  const float* s = scalars.ptr<const float>();
  const float g = s[0], dt = s[2] - s[1];  // the 0-dim fp32 difference the reference forms first
  const uint16_t* c = cond.ptr<const uint16_t>();
  const uint16_t* u = uncond ? uncond->ptr<const uint16_t>() : nullptr;
  float* xp = x.ptr<float>();
  parallel_for(C, [&](int64_t b, int64_t e) {
    for (int64_t ch = b; ch < e; ++ch)
      for (int64_t i = 0; i < n; ++i) {
        const float cv = float_from_bf16_bits(c[i * C + ch]);
        float pred = cv;
        if (u) {
          const float uv = float_from_bf16_bits(u[i * C + ch]);
          const float d = cv - uv;
          const float p = g * d;
          pred = uv + p;
        }
        const float step = dt * pred;
        xp[ch * n + i] = xp[ch * n + i] + step;
      }
  });
}

}  // namespace tf::cpu
