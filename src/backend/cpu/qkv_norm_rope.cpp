// qkv_norm_rope on the CPU: the composition of its steps' kernels (the fused op's bytes by definition).
#include <cstring>

#include "backend/attention/qkv_norm_rope.h"
#include "backend/norm/rms_norm.h"
#include "backend/rope/rope.h"
#include "core/parallel.h"

namespace tf::cpu {

void qkv_norm_rope(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, float eps, const Tensor& cos,
                   const Tensor& sin, Tensor& q, Tensor& k, Tensor& v) {
  const int64_t T = q.dim(0), H = q.dim(1), d = q.dim(2), D = H * d;
  const size_t row = static_cast<size_t>(D) * 2;
  const auto* src = static_cast<const uint8_t*>(qkv.data);
  parallel_for(T, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      std::memcpy(static_cast<uint8_t*>(q.data) + t * row, src + (3 * t) * row, row);
      std::memcpy(static_cast<uint8_t*>(k.data) + t * row, src + (3 * t + 1) * row, row);
      std::memcpy(static_cast<uint8_t*>(v.data) + t * row, src + (3 * t + 2) * row, row);
    }
  }, 64);
  Tensor q_rows = q.reshaped({T * H, d}), k_rows = k.reshaped({T * H, d});
  rms_norm_plain(q_rows, q_norm, eps, q_rows);
  rms_norm_plain(k_rows, k_norm, eps, k_rows);
  const SeqOffsets one = single_sequence(T);
  rope_split_half(q, cos, sin, one, q);
  rope_split_half(k, cos, sin, one, k);
}

}  // namespace tf::cpu
