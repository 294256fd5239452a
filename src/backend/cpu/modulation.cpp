// Element-wise CPU kernels of diffusion transformers: adaptive modulation, SiLU and SiTU's gated
// product, rounded where each op's header says.
#include <cmath>
#include <vector>

#include "backend/cpu/bf16_rows.h"
#include "backend/elementwise/modulate.h"
#include "backend/elementwise/silu.h"
#include "backend/elementwise/situ_gated_product.h"
#include "core/parallel.h"

namespace tf::cpu {

void modulate(const Tensor& x, const Tensor& shift, const Tensor& scale, Tensor& y) {
  const int64_t rows = x.dim(0), d = x.dim(1);
  const uint16_t *xp = bf16_ptr(x), *sh = bf16_ptr(shift), *sc = bf16_ptr(scale);
  uint16_t* yp = bf16_ptr_mut(y);
  std::vector<float> one_plus(d);
  for (int64_t i = 0; i < d; ++i) one_plus[i] = round_bf16(1.0f + ld(sc, i));
  parallel_for(rows, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      for (int64_t i = 0; i < d; ++i) yp[r * d + i] = st(round_bf16(ld(xp, r * d + i) * one_plus[i]) + ld(sh, i));
  }, 16);
}

void silu(const Tensor& x, Tensor& y) {
  const uint16_t* xp = bf16_ptr(x);
  uint16_t* yp = bf16_ptr_mut(y);
  parallel_for(x.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) yp[i] = st(silu32(ld(xp, i)));
  }, 1 << 13);
}

void situ_gated_product(const Tensor& up, const Tensor& gate, Tensor& y) {
  const uint16_t *up_p = bf16_ptr(up), *gate_p = bf16_ptr(gate);
  uint16_t* yp = bf16_ptr_mut(y);
  parallel_for(y.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
        const float u = ld(up_p, i), g = ld(gate_p, i);
        const float a = (4.0f * std::tanh(g / 4.0f)) * sigmoid32(g);
        const float bu = 25.0f * std::tanh(u / 25.0f);
        yp[i] = st(a * bu);
    }
  }, 1 << 12);
}

}  // namespace tf::cpu
