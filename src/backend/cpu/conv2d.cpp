#include "backend/conv/conv2d.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/gemm_f32.h"
#include "core/bf16.h"
#include "core/parallel.h"

namespace tf::cpu {

namespace {

using gemm::MR;
using gemm::NR;

constexpr int64_t KC = 256;  // k rows per packed B tile (one NR panel, 32 KB, stays in L1)
constexpr int64_t NC = 128;  // output positions per task

struct ConvShape {
  int64_t ci, h, w, co, kh, kw, ho, wo;
  int stride, pad_top, pad_left;
};

// A run of consecutive positions of one output row inside a B panel.
struct RowRun {
  int jj, len;
  int64_t oy, ox;
};

// im2col of k rows [k0, k0 + kc) and positions [p0, p0 + nc) straight into B panels (zero padding
// and panel tails written as zeros).
void pack_conv_b(const float* x, const ConvShape& s, int64_t k0, int64_t kc, int64_t p0, int64_t nc, float* dst) {
  std::vector<RowRun> runs;
  const int64_t kk_area = s.kh * s.kw;
  for (int64_t jb = 0; jb * NR < nc; ++jb) {
    float* panel = dst + jb * kc * NR;
    const int qn = static_cast<int>(std::min<int64_t>(NR, nc - jb * NR));
    runs.clear();
    for (int jj = 0; jj < qn;) {
      const int64_t p = p0 + jb * NR + jj;
      const int64_t oy = p / s.wo, ox = p % s.wo;
      const int len = static_cast<int>(std::min<int64_t>(qn - jj, s.wo - ox));
      runs.push_back({jj, len, oy, ox});
      jj += len;
    }
    for (int64_t kk = 0; kk < kc; ++kk) {
      const int64_t k = k0 + kk;
      const int64_t c = k / kk_area, ky = (k % kk_area) / s.kw, kx = k % s.kw;
      float* out = panel + kk * NR;
      for (const RowRun& r : runs) {
        const int64_t iy = r.oy * s.stride + ky - s.pad_top;
        float* o = out + r.jj;
        if (iy < 0 || iy >= s.h) {
          std::fill(o, o + r.len, 0.0f);
          continue;
        }
        const float* row = x + (c * s.h + iy) * s.w;
        const int64_t ix0 = r.ox * s.stride + kx - s.pad_left;
        if (s.stride == 1) {
          // valid t: 0 <= ix0 + t < w
          const int64_t t0 = std::clamp<int64_t>(-ix0, 0, r.len);
          const int64_t t1 = std::clamp<int64_t>(s.w - ix0, t0, r.len);
          std::fill(o, o + t0, 0.0f);
          std::memcpy(o + t0, row + ix0 + t0, (t1 - t0) * sizeof(float));
          std::fill(o + t1, o + r.len, 0.0f);
        } else {
          for (int t = 0; t < r.len; ++t) {
            const int64_t ix = ix0 + t * s.stride;
            o[t] = (ix >= 0 && ix < s.w) ? row[ix] : 0.0f;
          }
        }
      }
      std::fill(out + qn, out + NR, 0.0f);
    }
  }
}

}  // namespace

namespace {

void convolve(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
              const Tensor* residual) {
  ConvShape s{x.dim(0), x.dim(1), x.dim(2), w.dim(0), w.dim(2), w.dim(3), y.dim(1), y.dim(2),
              g.stride, g.pad_top, g.pad_left};
  const int64_t k_total = s.ci * s.kh * s.kw;
  const int64_t positions = s.ho * s.wo;
  if (positions == 0 || s.co == 0) return;

  // Weights [Co, K] (bf16, exact in fp32) packed once into MR-row panels.
  std::vector<float> a(gemm::packed_a_size(s.co, k_total));
  const uint16_t* wb = w.ptr<const uint16_t>();
  parallel_for((s.co + MR - 1) / MR, [&](int64_t b, int64_t e) {
    for (int64_t ib = b; ib < e; ++ib) {
      float* panel = a.data() + ib * k_total * MR;
      for (int64_t k = 0; k < k_total; ++k)
        for (int r = 0; r < MR; ++r) {
          const int64_t co = ib * MR + r;
          panel[k * MR + r] = co < s.co ? float_from_bf16_bits(wb[co * k_total + k]) : 0.0f;
        }
    }
  });

  const float* xp = x.ptr<const float>();
  float* yp = y.ptr<float>();
  const uint16_t* bp = bias.ptr<const uint16_t>();
  const float* rp = residual ? residual->ptr<const float>() : nullptr;
  const int64_t chunks = (positions + NC - 1) / NC;
  parallel_for(chunks, [&](int64_t cb, int64_t ce) {
    std::vector<float> bpack(gemm::packed_b_size(KC, NC));
    for (int64_t chunk = cb; chunk < ce; ++chunk) {
      const int64_t p0 = chunk * NC, nc = std::min<int64_t>(NC, positions - p0);
      for (int64_t k0 = 0; k0 < k_total; k0 += KC) {
        const int64_t kc = std::min<int64_t>(KC, k_total - k0);
        pack_conv_b(xp, s, k0, kc, p0, nc, bpack.data());
        for (int64_t jb = 0; jb * NR < nc; ++jb) {
          const int nv = static_cast<int>(std::min<int64_t>(NR, nc - jb * NR));
          for (int64_t ib = 0; ib * MR < s.co; ++ib) {
            const int mv = static_cast<int>(std::min<int64_t>(MR, s.co - ib * MR));
            gemm::micro_kernel(kc, a.data() + ib * k_total * MR + k0 * MR, bpack.data() + jb * kc * NR,
                               yp + ib * MR * positions + p0 + jb * NR, positions, k0 == 0, mv, nv);
          }
        }
      }
      // The bias, then the residual: one fp32 rounding each.
      for (int64_t co = 0; co < s.co; ++co) {
        const float b = float_from_bf16_bits(bp[co]);
        float* row = yp + co * positions + p0;
        for (int64_t j = 0; j < nc; ++j) row[j] = row[j] + b;
        if (rp) {
          const float* rr = rp + co * positions + p0;
          for (int64_t j = 0; j < nc; ++j) row[j] = row[j] + rr[j];
        }
      }
    }
  });
}

}  // namespace

void conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
            const Tensor* residual, GroupStats* y_stats) {
  convolve(x, w, bias, g, y, residual);
  if (y_stats) cpu::group_stats(y, *y_stats);
}

}  // namespace tf::cpu
