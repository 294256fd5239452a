// qkv_norm_rope on the CPU: a row's sum of squares one fp32 sum in index order, then each element's
// fp32 steps and one rounding (backend/attention/qkv_norm_rope.h).
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/attention/qkv_norm_rope.h"
#include "backend/cpu/bf16_rows.h"
#include "core/parallel.h"

namespace tf::cpu {

void qkv_norm_rope(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, float eps, const Tensor& cos,
                   const Tensor& sin, Tensor& q, Tensor& k, Tensor& v) {
  const int64_t T = q.dim(0), H = q.dim(1), d = q.dim(2), D = H * d, half = d / 2;
  const uint16_t* src = bf16_ptr(qkv);
  const float *cs = cos.ptr<const float>(), *sn = sin.ptr<const float>();
  parallel_for(T, [&](int64_t b, int64_t e) {
    std::vector<float> n(static_cast<size_t>(d));
    for (int64_t t = b; t < e; ++t) {
      std::memcpy(bf16_ptr_mut(v) + t * D, src + (3 * t + 2) * D, static_cast<size_t>(D) * 2);
      const float *c = cs + t * half, *s = sn + t * half;
      for (int part = 0; part < 2; ++part) {
        const Tensor& w = part == 0 ? q_norm : k_norm;
        uint16_t* dst = bf16_ptr_mut(part == 0 ? q : k) + t * D;
        for (int64_t h = 0; h < H; ++h) {
          const uint16_t* x = src + (3 * t + part) * D + h * d;
          float sum = 0.0f;
          for (int64_t i = 0; i < d; ++i) sum += ld(x, i) * ld(x, i);
          const float r = 1.0f / std::sqrt(sum / static_cast<float>(d) + eps);
          for (int64_t i = 0; i < d; ++i) n[i] = (ld(x, i) * r) * ld_weight(w, i);
          for (int64_t i = 0; i < d; ++i) {
            const float rot = i < half ? -n[i + half] : n[i - half];
            dst[h * d + i] = st(n[i] * c[i % half] + rot * s[i % half]);
          }
        }
      }
    }
  }, 16);
}

}  // namespace tf::cpu
