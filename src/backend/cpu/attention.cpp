// Attention on the CPU with torch eager's bf16 rounding points: split-half RoPE, grouped-query
// attention (causal or bidirectional) and gated attention's query / key prep.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/bf16_rows.h"
#include "backend/attention/attention.h"
#include "backend/attention/attention_query_key_prep.h"
#include "backend/attention/split_query_gate.h"
#include "backend/norm/rms_norm.h"
#include "backend/rope/rope.h"
#include "core/parallel.h"

namespace tf::cpu {

void rope_split_half(const Tensor& x, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& y) {
  int64_t T = x.dim(0), heads = x.dim(1), hd = x.dim(2), half = cos.dim(1);
  const uint16_t* xp = bf16_ptr(x);
  const uint16_t* cp = bf16_ptr(cos);
  const uint16_t* sp = bf16_ptr(sin);
  uint16_t* yp = bf16_ptr_mut(y);
  std::vector<int64_t> pos(T);
  for (size_t s = 0; s + 1 < seq_offsets.size(); ++s)
    for (int64_t t = seq_offsets[s]; t < seq_offsets[s + 1]; ++t) pos[t] = t - seq_offsets[s];
  parallel_for(T, [&](int64_t tb, int64_t te) {
    std::vector<uint16_t> rotated(2 * half);
    for (int64_t t = tb; t < te; ++t) {
      const uint16_t* c = cp + pos[t] * half;
      const uint16_t* s = sp + pos[t] * half;
      for (int64_t h = 0; h < heads; ++h) {
        const uint16_t* xr = xp + (t * heads + h) * hd;
        uint16_t* yr = yp + (t * heads + h) * hd;
        for (int64_t i = 0; i < 2 * half; ++i) {
          float xi = ld(xr, i);
          float rot = i < half ? -ld(xr, i + half) : ld(xr, i - half);
          float ci = ld(c, i % half), si = ld(s, i % half);
          rotated[i] = st(round_bf16(xi * ci) + round_bf16(rot * si));
        }
        if (yr != xr)
          for (int64_t i = 2 * half; i < hd; ++i) yr[i] = xr[i];
        for (int64_t i = 0; i < 2 * half; ++i) yr[i] = rotated[i];
      }
    }
  }, 4);
}

namespace {

// Keys of a row: j <= t within its sequence (Causal) or every key of its sequence. Fused: fp32
// scores and softmax, one rounding at the end; else torch eager's bf16 roundings.
template <bool Causal, bool Fused = false>
void attention_bf16(const Tensor& q, const Tensor& k, const Tensor& v, float scale, const SeqOffsets& seq_offsets,
                    Tensor& o) {
  int64_t Hq = q.dim(1), d = q.dim(2), Hkv = k.dim(1), group = Hq / Hkv;
  const uint16_t* qp = bf16_ptr(q);
  const uint16_t* kp = bf16_ptr(k);
  const uint16_t* vp = bf16_ptr(v);
  uint16_t* op = bf16_ptr_mut(o);
  // Tasks are (query head, token) rows, head-major so both blocks get equal causal work; each
  // row's sums run in one fixed order.
  int64_t T = q.dim(0);
  std::vector<int64_t> seq_start(T), seq_end(T);
  for (size_t s = 0; s + 1 < seq_offsets.size(); ++s)
    for (int64_t t = seq_offsets[s]; t < seq_offsets[s + 1]; ++t) seq_start[t] = seq_offsets[s], seq_end[t] = seq_offsets[s + 1];
  parallel_for(T * Hq, [&](int64_t rb, int64_t re) {
    std::vector<float> qf(d), p, acc(d);
    for (int64_t r = rb; r < re; ++r) {
      int64_t h = r / T, t = r % T, hk = h / group;
      int64_t first = seq_start[t], n = Causal ? t - first + 1 : seq_end[t] - first;
      const uint16_t* qr = qp + (t * Hq + h) * d;
      for (int64_t i = 0; i < d; ++i) qf[i] = ld(qr, i);
      p.assign(n, 0.0f);
      float m = -INFINITY;
      for (int64_t j = 0; j < n; ++j) {
        const uint16_t* kr = kp + ((first + j) * Hkv + hk) * d;
        float dot = 0.0f;
        for (int64_t i = 0; i < d; ++i) dot += qf[i] * ld(kr, i);
        float s = Fused ? dot * scale : round_bf16(round_bf16(dot) * scale);  // eager: bf16 matmul output, then bf16 * scale
        p[j] = s;
        m = std::max(m, s);
      }
      float sum = 0.0f;
      for (int64_t j = 0; j < n; ++j) {
        p[j] = std::exp(p[j] - m);
        sum += p[j];
      }
      if (!Fused)
        for (int64_t j = 0; j < n; ++j) p[j] = round_bf16(p[j] / sum);  // softmax in fp32, then to bf16
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t j = 0; j < n; ++j) {
        const uint16_t* vr = vp + ((first + j) * Hkv + hk) * d;
        for (int64_t i = 0; i < d; ++i) acc[i] += p[j] * ld(vr, i);
      }
      uint16_t* orow = op + (t * Hq + h) * d;
      for (int64_t i = 0; i < d; ++i) orow[i] = st(Fused ? acc[i] / sum : acc[i]);
    }
  }, 4);
}

}  // namespace

void attention_bf16_causal(const Tensor& q, const Tensor& k, const Tensor& v, float scale, const SeqOffsets& seq_offsets,
                           Tensor& o) {
  attention_bf16<true>(q, k, v, scale, seq_offsets, o);
}

void attention_bf16_bidirectional(const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                                  const SeqOffsets& seq_offsets, Tensor& o) {
  attention_bf16<false>(q, k, v, scale, seq_offsets, o);
}

void attention_fused_causal(const Tensor& q, const Tensor& k, const Tensor& v, float scale, const SeqOffsets& seq_offsets,
                            Tensor& o) {
  attention_bf16<true, true>(q, k, v, scale, seq_offsets, o);
}

void attention_fused_bidirectional(const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                                   const SeqOffsets& seq_offsets, Tensor& o) {
  attention_bf16<false, true>(q, k, v, scale, seq_offsets, o);
}

// The four steps in turn: the op's bytes are theirs by construction.
void attention_query_key_prep(const Tensor& qg, const Tensor& kraw, const Tensor& q_norm, const Tensor& k_norm,
                              float eps, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& q,
                              Tensor& k, Tensor& gate) {
  const int64_t T = q.dim(0), Hq = q.dim(1), Hkv = k.dim(1), d = q.dim(2);
  Tensor query = empty(DType::BF16, q.shape);
  cpu::split_query_gate(qg, query, gate);
  Tensor q_rows = q.reshaped({T * Hq, d}), k_rows = k.reshaped({T * Hkv, d});
  cpu::rms_norm_one_plus(query.reshaped({T * Hq, d}), q_norm, eps, q_rows);
  cpu::rms_norm_one_plus(kraw.reshaped({T * Hkv, d}), k_norm, eps, k_rows);
  cpu::rope_split_half(q, cos, sin, seq_offsets, q);
  cpu::rope_split_half(k, cos, sin, seq_offsets, k);
}

}  // namespace tf::cpu
