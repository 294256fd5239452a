// The gated delta rule in the chunked (WY) form on the CPU: the plain statement of the form, for the
// contract and for comparison. The CUDA prep follows its decays and inverse step for step; its
// products (and the pass's) are 3xTF32 MMAs there, so their sums run in another order.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/bf16_rows.h"
#include "backend/delta_rule/gated_delta_rule.h"
#include "core/parallel.h"

namespace tf::cpu {

namespace {

constexpr int64_t C = kDeltaRuleChunk;

// One chunk's preparation: decays, W = A X, U = A Y, M (rows i < n; M[i][j] = 0 for j > i).
struct ChunkPrep {
  std::vector<float> eG, eL, W, U, M;  // [n], [n], [n][dk], [n][dv], [n][C]
};

float dot(const float* a, const float* b, int64_t n) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s = std::fma(a[i], b[i], s);
  return s;
}

// A = (I + L)^-1 for L strictly lower [C][C], in 16-row blocks: each diagonal block D by forward
// substitution, then block rows in turn, T = L A over the rows above and A = -D T. Every sum in one
// chain, in order (the order of the CUDA prep's invert_diagonal_blocks and invert_block_rows).
std::vector<float> invert_unit_lower(const std::vector<float>& L) {
  constexpr int64_t B = 16;
  std::vector<float> A(C * C, 0.0f), T(B * C);
  for (int64_t base = 0; base < C; base += B)
    for (int64_t m = 0; m < B; ++m) {
      A[(base + m) * C + base + m] = 1.0f;
      for (int64_t i = m + 1; i < B; ++i) {
        float s = 0.0f;
        for (int64_t j = m; j < i; ++j) s = std::fma(L[(base + i) * C + base + j], A[(base + j) * C + base + m], s);
        A[(base + i) * C + base + m] = -s;
      }
    }
  for (int64_t row0 = B; row0 < C; row0 += B) {
    for (int64_t r = 0; r < B; ++r)
      for (int64_t c = 0; c < row0; ++c) {
        float s = 0.0f;
        for (int64_t x = c; x < row0; ++x) s = std::fma(L[(row0 + r) * C + x], A[x * C + c], s);
        T[r * C + c] = s;
      }
    for (int64_t r = 0; r < B; ++r)
      for (int64_t c = 0; c < row0; ++c) {
        float s = 0.0f;
        for (int64_t x = 0; x <= r; ++x) s = std::fma(A[(row0 + r) * C + row0 + x], T[x * C + c], s);
        A[(row0 + r) * C + c] = -s;
      }
  }
  return A;
}

ChunkPrep prepare(const float* q, const float* k, const float* v, const float* beta, const float* g, int64_t n,
                  int64_t qk_stride, int64_t v_stride, int64_t bg_stride, int64_t dk, int64_t dv) {
  ChunkPrep p;
  // E[i][j + 1] = exp(g_{j+1} + .. + g_i) for j = -1 .. i: each column's own running sum.
  std::vector<float> E(C * (C + 1), 0.0f);
  for (int64_t c = 0; c <= n; ++c) {
    if (c >= 1) E[(c - 1) * (C + 1) + c] = 1.0f;
    float D = 0.0f;
    for (int64_t i = c; i < n; ++i) {
      D = D + g[i * bg_stride];
      E[i * (C + 1) + c] = std::exp(D);
    }
  }
  auto e = [&](int64_t i, int64_t j) { return E[i * (C + 1) + j + 1]; };
  p.eG.resize(n);
  p.eL.resize(n);
  for (int64_t i = 0; i < n; ++i) p.eG[i] = e(i, -1), p.eL[i] = e(n - 1, i);

  std::vector<float> L(C * C, 0.0f);
  p.M.assign(n * C, 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      const float* ki = k + i * qk_stride;
      const float* kj = k + j * qk_stride;
      if (j < i) L[i * C + j] = (beta[i * bg_stride] * dot(ki, kj, dk)) * e(i, j);
      p.M[i * C + j] = dot(q + i * qk_stride, kj, dk) * e(i, j);
    }

  std::vector<float> A = invert_unit_lower(L);

  p.W.assign(n * dk, 0.0f);
  p.U.assign(n * dv, 0.0f);
  std::vector<float> X(n * dk), Y(n * dv);
  for (int64_t j = 0; j < n; ++j) {
    const float bj = beta[j * bg_stride], xs = bj * p.eG[j];
    for (int64_t c = 0; c < dk; ++c) X[j * dk + c] = xs * k[j * qk_stride + c];
    for (int64_t c = 0; c < dv; ++c) Y[j * dv + c] = bj * v[j * v_stride + c];
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      const float a = A[i * C + j];
      for (int64_t c = 0; c < dk; ++c) p.W[i * dk + c] = std::fma(a, X[j * dk + c], p.W[i * dk + c]);
      for (int64_t c = 0; c < dv; ++c) p.U[i * dv + c] = std::fma(a, Y[j * dv + c], p.U[i * dv + c]);
    }
  return p;
}

// One (sequence, value head): chunks in order, the state S [dk][dv] carried between them.
void chunked_one(const float* qp, const float* kp, const float* vp, const float* betap, const float* gp, int64_t t0,
                 int64_t t1, int64_t h, int64_t hk, int64_t Hk, int64_t dk, int64_t Hv, int64_t dv, uint16_t* op) {
  std::vector<float> S(dk * dv, 0.0f), Vp(C * dv), Vpp(C * dv), P(C * dv);
  for (int64_t c0 = t0; c0 < t1; c0 += C) {
    const int64_t n = std::min(C, t1 - c0);
    const float* q = qp + (c0 * Hk + hk) * dk;
    const float* k = kp + (c0 * Hk + hk) * dk;
    ChunkPrep p = prepare(q, k, vp + (c0 * Hv + h) * dv, betap + c0 * Hv + h, gp + c0 * Hv + h, n, Hk * dk, Hv * dv,
                          Hv, dk, dv);
    // V' = U - W S and P = Q S, sums over the key dim in order.
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < dv; ++c) {
        float ws = 0.0f, qs = 0.0f;
        for (int64_t r = 0; r < dk; ++r) {
          ws = std::fma(p.W[i * dk + r], S[r * dv + c], ws);
          qs = std::fma(q[i * Hk * dk + r], S[r * dv + c], qs);
        }
        Vp[i * dv + c] = p.U[i * dv + c] - ws;
        Vpp[i * dv + c] = p.eL[i] * Vp[i * dv + c];
        P[i * dv + c] = qs;
      }
    // O = bf16(exp(G_i) P + M V'), then S = exp(G_last) S + K^T V''.
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < dv; ++c) {
        float acc = p.eG[i] * P[i * dv + c];
        for (int64_t j = 0; j <= i; ++j) acc = std::fma(p.M[i * C + j], Vp[j * dv + c], acc);
        op[((c0 + i) * Hv + h) * dv + c] = st(acc);
      }
    const float last = p.eG[n - 1];
    for (int64_t r = 0; r < dk; ++r)
      for (int64_t c = 0; c < dv; ++c) {
        float acc = last * S[r * dv + c];
        for (int64_t j = 0; j < n; ++j) acc = std::fma(k[j * Hk * dk + r], Vpp[j * dv + c], acc);
        S[r * dv + c] = acc;
      }
  }
}

}  // namespace

void gated_delta_rule_chunked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                              const SeqOffsets& seq_offsets, Tensor& o) {
  int64_t Hk = q.dim(1), dk = q.dim(2), Hv = v.dim(1), dv = v.dim(2);
  int64_t group = Hv / Hk;
  int64_t seqs = static_cast<int64_t>(seq_offsets.size()) - 1;
  // One (sequence, value head) pair per task: each owns its state.
  parallel_for(seqs * Hv, [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      int64_t s = p / Hv, h = p % Hv;
      chunked_one(q.ptr<float>(), k.ptr<float>(), v.ptr<float>(), beta.ptr<float>(), g.ptr<float>(), seq_offsets[s],
                  seq_offsets[s + 1], h, h / group, Hk, dk, Hv, dv, bf16_ptr_mut(o));
    }
  });
}

}  // namespace tf::cpu
