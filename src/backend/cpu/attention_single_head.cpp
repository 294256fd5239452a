#include "backend/attention/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/gemm_f32.h"
#include "core/parallel.h"

namespace tf::cpu {

namespace {
constexpr int64_t BQ = 96;   // queries per task (a multiple of gemm::MR)
constexpr int64_t BK = 256;  // keys per softmax block
}  // namespace

void attention_f32_channels(const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& o) {
  const int64_t d = q.dim(0), n = q.dim(1);
  const float* qp = q.ptr<const float>();
  const float* kp = k.ptr<const float>();
  const float* vp = v.ptr<const float>();
  float* op = o.ptr<float>();

  // v transposed to [N, D] once, so each key block is a contiguous B operand of p @ v^T.
  std::vector<float> vt(static_cast<size_t>(n * d));
  parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j)
      for (int64_t c = 0; c < d; ++c) vt[j * d + c] = vp[c * n + j];
  }, 64);

  const int64_t tasks = (n + BQ - 1) / BQ;
  parallel_for(tasks, [&](int64_t tb, int64_t te) {
    std::vector<float> qa(gemm::packed_a_size(BQ, d)), kb(gemm::packed_b_size(d, BK));
    std::vector<float> pa(gemm::packed_a_size(BQ, BK)), vb(gemm::packed_b_size(BK, d));
    std::vector<float> scores(BQ * BK), acc(BQ * d), row_max(BQ), row_sum(BQ);
    for (int64_t t = tb; t < te; ++t) {
      const int64_t i0 = t * BQ, bq = std::min(BQ, n - i0);
      gemm::pack_a(qp + i0, bq, d, 1, n, qa.data());  // A(i, c) = q[c, i0 + i]
      std::fill(row_max.begin(), row_max.end(), -std::numeric_limits<float>::infinity());
      std::fill(row_sum.begin(), row_sum.end(), 0.0f);
      for (int64_t j0 = 0; j0 < n; j0 += BK) {
        const int64_t bk = std::min(BK, n - j0);
        gemm::pack_b(kp, 0, d, j0, bk, n, 1, kb.data());  // B(c, j) = k[c, j0 + j]
        gemm::gemm_packed(bq, bk, d, qa.data(), kb.data(), scores.data(), BK, false);
        for (int64_t i = 0; i < bq; ++i) {
          float* s = scores.data() + i * BK;
          float m = row_max[i];
          for (int64_t j = 0; j < bk; ++j) {
            s[j] = s[j] * scale;
            m = std::max(m, s[j]);
          }
          const float alpha = j0 == 0 ? 0.0f : std::exp(row_max[i] - m);
          float l = 0.0f;
          for (int64_t j = 0; j < bk; ++j) {
            s[j] = std::exp(s[j] - m);
            l += s[j];
          }
          row_sum[i] = row_sum[i] * alpha + l;
          row_max[i] = m;
          if (j0 > 0) {
            float* a = acc.data() + i * d;
            for (int64_t c = 0; c < d; ++c) a[c] = a[c] * alpha;
          }
        }
        gemm::pack_a(scores.data(), bq, bk, BK, 1, pa.data());
        gemm::pack_b(vt.data() + j0 * d, 0, bk, 0, d, d, 1, vb.data());
        gemm::gemm_packed(bq, d, bk, pa.data(), vb.data(), acc.data(), d, j0 > 0);
      }
      for (int64_t i = 0; i < bq; ++i) {
        const float l = row_sum[i];
        for (int64_t c = 0; c < d; ++c) op[c * n + i0 + i] = acc[i * d + c] / l;
      }
    }
  });
}

}  // namespace tf::cpu
