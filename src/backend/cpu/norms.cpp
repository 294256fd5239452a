// Row norms on the CPU: RMSNorm with a one_plus weight (optionally after the residual add) or a plain
// one (optionally followed by adaptive modulation), and the gated RMSNorm. Each row's sum of squares is one fp32 sum in index order.
#include <cmath>
#include <vector>

#include "backend/cpu/bf16_rows.h"
#include "backend/elementwise/residual_add.h"
#include "backend/norm/rms_norm.h"
#include "backend/norm/rms_norm_gated.h"
#include "backend/norm/rms_norm_modulate.h"
#include "core/parallel.h"

namespace tf::cpu {

namespace {

// 1 / sqrt(mean(x^2) + eps) of one row already in fp32, as torch's rsqrt (a division of a sqrt).
float inv_rms(const float* x, int64_t d, float eps) {
  float sum = 0.0f;
  for (int64_t i = 0; i < d; ++i) sum += x[i] * x[i];
  float mean = sum / static_cast<float>(d);
  return 1.0f / std::sqrt(mean + eps);
}

void norm_row(const float* x, const Tensor& w, int64_t d, float eps, uint16_t* y) {
  float r = inv_rms(x, d, eps);
  for (int64_t i = 0; i < d; ++i) y[i] = st((x[i] * r) * (1.0f + ld_weight(w, i)));
}

// Each row of x [rows, d] read into fp32 and handed with its inverse RMS to per_row(r, row, inv).
template <class F>
void for_each_row(const Tensor& x, float eps, F&& per_row, int64_t grain = 1) {
  const int64_t rows = x.dim(0), d = x.dim(1);
  const uint16_t* xp = bf16_ptr(x);
  parallel_for(rows, [&](int64_t b, int64_t e) {
    std::vector<float> row(d);
    for (int64_t r = b; r < e; ++r) {
      for (int64_t i = 0; i < d; ++i) row[i] = ld(xp, r * d + i);
      per_row(r, row.data(), inv_rms(row.data(), d, eps));
    }
  }, grain);
}

}  // namespace

void rms_norm_one_plus(const Tensor& x, const Tensor& w, float eps, Tensor& y) {
  int64_t rows = x.dim(0), d = x.dim(1);
  const uint16_t* xp = bf16_ptr(x);
  uint16_t* yp = bf16_ptr_mut(y);
  parallel_for(rows, [&](int64_t b, int64_t e) {
    std::vector<float> row(d);
    for (int64_t r = b; r < e; ++r) {
      for (int64_t i = 0; i < d; ++i) row[i] = ld(xp, r * d + i);
      norm_row(row.data(), w, d, eps, yp + r * d);
    }
  });
}

void residual_add_rms_norm_one_plus(Tensor& h, const Tensor& d_, const Tensor& w, float eps, Tensor& y) {
  int64_t rows = h.dim(0), d = h.dim(1);
  uint16_t* hp = bf16_ptr_mut(h);
  uint16_t* yp = bf16_ptr_mut(y);
  parallel_for(rows, [&](int64_t b, int64_t e) {
    std::vector<float> row(d);
    for (int64_t r = b; r < e; ++r) {
      for (int64_t i = 0; i < d; ++i) {
        uint16_t sum = st(ld(hp, r * d + i) + residual_delta(d_, r * d + i));
        hp[r * d + i] = sum;
        row[i] = float_from_bf16_bits(sum);
      }
      norm_row(row.data(), w, d, eps, yp + r * d);
    }
  });
}

void rms_norm_plain(const Tensor& x, const Tensor& w, float eps, Tensor& y) {
  const int64_t d = x.dim(1);
  const uint16_t* wp = bf16_ptr(w);
  uint16_t* yp = bf16_ptr_mut(y);
  for_each_row(x, eps, [&](int64_t r, const float* row, float inv) {
    for (int64_t i = 0; i < d; ++i) yp[r * d + i] = st(round_bf16(row[i] * inv) * ld(wp, i));
  });
}

void rms_norm_modulate(const Tensor& x, const Tensor& w, float eps, const Tensor& shift, const Tensor& scale, Tensor& y) {
  const int64_t d = x.dim(1);
  const uint16_t* shp = bf16_ptr(shift);
  const uint16_t* scp = bf16_ptr(scale);
  uint16_t* yp = bf16_ptr_mut(y);
  for_each_row(x, eps, [&](int64_t r, const float* row, float inv) {
    for (int64_t i = 0; i < d; ++i) {
      const float n = (row[i] * inv) * ld_weight(w, i);
      yp[r * d + i] = st(n * (1.0f + ld(scp, i)) + ld(shp, i));
    }
  }, 16);
}

// The two steps' kernels in turn: the fused op's bytes by definition.
void residual_add_rms_norm_modulate(Tensor& h, const Tensor& d, const Tensor& gate, const Tensor& w, float eps,
                                    const Tensor& shift, const Tensor& scale, Tensor& y) {
  cpu::residual_add_gated(h, d, gate);
  cpu::rms_norm_modulate(h, w, eps, shift, scale, y);
}

void rms_norm_gated(const Tensor& x, const Tensor& z, const Tensor& w, float eps, Tensor& y) {
  const int64_t d = x.dim(1);
  const uint16_t* zp = bf16_ptr(z);
  uint16_t* yp = bf16_ptr_mut(y);
  const bool w_bf16 = w.dtype == DType::BF16;
  for_each_row(x, eps, [&](int64_t r, const float* row, float inv) {
    for (int64_t i = 0; i < d; ++i) {
      float n = round_bf16(row[i] * inv);  // hidden_states.to(input_dtype)
      float t = ld_weight(w, i) * n;
      if (w_bf16) t = round_bf16(t);  // a bf16 weight times a bf16 tensor stays bf16
      yp[r * d + i] = st(t * silu32(ld(zp, r * d + i)));
    }
  }, 16);
}

}  // namespace tf::cpu
