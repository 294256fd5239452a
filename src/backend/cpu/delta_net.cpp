// Gated DeltaNet on the CPU: causal depthwise conv + SiLU, the input prep (beta, decay, q/k L2
// norm) and the recurrent gated delta rule with fp32 state.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/bf16_rows.h"
#include "backend/conv/causal_conv1d_silu.h"
#include "backend/delta_rule/causal_conv1d_silu_delta_net_prep.h"
#include "backend/delta_rule/delta_net_prep.h"
#include "backend/delta_rule/gated_delta_rule.h"
#include "core/parallel.h"

namespace tf::cpu {

void causal_conv1d_silu(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets, Tensor& y) {
  int64_t C = x.dim(1), K = w.dim(2);
  const uint16_t* xp = bf16_ptr(x);
  const uint16_t* wp = bf16_ptr(w);
  uint16_t* yp = bf16_ptr_mut(y);
  for (size_t s = 0; s + 1 < seq_offsets.size(); ++s) {
    int64_t start = seq_offsets[s], end = seq_offsets[s + 1];
    parallel_for(C, [&](int64_t cb, int64_t ce) {
      for (int64_t t = start; t < end; ++t) {
        for (int64_t c = cb; c < ce; ++c) {
          float acc = 0.0f;
          for (int64_t j = 0; j < K; ++j) {
            int64_t src = t - (K - 1) + j;  // left zero padding of K - 1 positions
            if (src >= start) acc += ld(wp, c * K + j) * ld(xp, src * C + c);
          }
          yp[t * C + c] = st(silu32(round_bf16(acc)));  // conv output is bf16, then silu on bf16
        }
      }
    }, 256);
  }
}

void delta_net_prep(const Tensor& mixed, const Tensor& b, const Tensor& a, const Tensor& A_log,
                    const Tensor& dt_bias, Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g) {
  int64_t T = q.dim(0), Hk = q.dim(1), dk = q.dim(2), Hv = v.dim(1), dv = v.dim(2);
  int64_t width = mixed.dim(1), key_dim = Hk * dk;
  const uint16_t* mp = bf16_ptr(mixed);
  const uint16_t* bp = bf16_ptr(b);
  const uint16_t* ap = bf16_ptr(a);
  float* qp = q.ptr<float>();
  float* kp = k.ptr<float>();
  float* vp = v.ptr<float>();
  float* betap = beta.ptr<float>();
  float* gp = g.ptr<float>();
  const float q_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)));  // dk ** -0.5 as python does
  // x * (1 / sqrt(sum(x^2) + 1e-6)) in fp32, as transformers' l2norm after the fp32 cast.
  auto l2norm = [&](const uint16_t* src, float* dst, float scale, bool scaled) {
    float sum = 0.0f;
    for (int64_t i = 0; i < dk; ++i) {
      float x = float_from_bf16_bits(src[i]);
      sum += x * x;
    }
    float inv = 1.0f / std::sqrt(sum + 1e-6f);
    for (int64_t i = 0; i < dk; ++i) {
      float n = float_from_bf16_bits(src[i]) * inv;
      dst[i] = scaled ? n * scale : n;
    }
  };
  parallel_for(T, [&](int64_t tb, int64_t te) {
    for (int64_t t = tb; t < te; ++t) {
      const uint16_t* row = mp + t * width;
      for (int64_t h = 0; h < Hk; ++h) {
        l2norm(row + h * dk, qp + (t * Hk + h) * dk, q_scale, true);
        l2norm(row + key_dim + h * dk, kp + (t * Hk + h) * dk, 1.0f, false);
      }
      for (int64_t i = 0; i < Hv * dv; ++i) vp[t * Hv * dv + i] = ld(row, 2 * key_dim + i);
      for (int64_t h = 0; h < Hv; ++h) {
        betap[t * Hv + h] = round_bf16(sigmoid32(ld(bp, t * Hv + h)));  // b.sigmoid() on bf16
        float x = ld(ap, t * Hv + h) + ld_weight(dt_bias, h);
        float softplus = x > 20.0f ? x : std::log1p(std::exp(x));
        gp[t * Hv + h] = -std::exp(ld_weight(A_log, h)) * softplus;
      }
    }
  }, 4);
}

void causal_conv1d_silu_delta_net_prep(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets,
                                       const Tensor& b, const Tensor& a, const Tensor& A_log, const Tensor& dt_bias,
                                       Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g) {
  Tensor conv = empty(DType::BF16, x.shape, Device::CPU);
  cpu::causal_conv1d_silu(x, w, seq_offsets, conv);
  cpu::delta_net_prep(conv, b, a, A_log, dt_bias, q, k, v, beta, g);
}

namespace {

// One (sequence, value head): the recurrence over its tokens. Vector widths may differ between
// the clones; every element's operations and their order do not.
__attribute__((target_clones("avx512f", "avx2", "default")))
void delta_rule_one(const float* qp, const float* kp, const float* vp, const float* betap, const float* gp,
                    int64_t t0, int64_t t1, int64_t h, int64_t hk, int64_t Hk, int64_t dk, int64_t Hv, int64_t dv,
                    float* S, float* kv, float* d, float* out, uint16_t* op) {
  std::fill(S, S + dk * dv, 0.0f);
  for (int64_t t = t0; t < t1; ++t) {
    const float* qt = qp + (t * Hk + hk) * dk;
    const float* kt = kp + (t * Hk + hk) * dk;
    const float* vt = vp + (t * Hv + h) * dv;
    const float decay = std::exp(gp[t * Hv + h]);
    const float bt = betap[t * Hv + h];
    for (int64_t i = 0; i < dk * dv; ++i) S[i] = S[i] * decay;
    std::fill(kv, kv + dv, 0.0f);
    for (int64_t i = 0; i < dk; ++i) {
      const float ki = kt[i];
      const float* Si = S + i * dv;
      for (int64_t j = 0; j < dv; ++j) kv[j] += Si[j] * ki;
    }
    for (int64_t j = 0; j < dv; ++j) d[j] = (vt[j] - kv[j]) * bt;
    std::fill(out, out + dv, 0.0f);
    for (int64_t i = 0; i < dk; ++i) {
      float* Si = S + i * dv;
      const float ki = kt[i], qi = qt[i];
      for (int64_t j = 0; j < dv; ++j) Si[j] = Si[j] + ki * d[j];
      for (int64_t j = 0; j < dv; ++j) out[j] += Si[j] * qi;
    }
    for (int64_t j = 0; j < dv; ++j) op[(t * Hv + h) * dv + j] = st(out[j]);
  }
}

}  // namespace

void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                      const SeqOffsets& seq_offsets, Tensor& o) {
  int64_t Hk = q.dim(1), dk = q.dim(2), Hv = v.dim(1), dv = v.dim(2);
  int64_t group = Hv / Hk;
  int64_t seqs = static_cast<int64_t>(seq_offsets.size()) - 1;
  // One (sequence, value head) pair per task; each owns its state, so the work split cannot change a sum.
  parallel_for(seqs * Hv, [&](int64_t pb, int64_t pe) {
    std::vector<float> S(dk * dv), kv(dv), d(dv), out(dv);
    for (int64_t p = pb; p < pe; ++p) {
      int64_t s = p / Hv, h = p % Hv;
      delta_rule_one(q.ptr<float>(), k.ptr<float>(), v.ptr<float>(), beta.ptr<float>(), g.ptr<float>(),
                     seq_offsets[s], seq_offsets[s + 1], h, h / group, Hk, dk, Hv, dv, S.data(), kv.data(), d.data(),
                     out.data(), bf16_ptr_mut(o));
    }
  });
}

}  // namespace tf::cpu
