// The recurrent gated delta rule on CUDA, the fp32 state held in registers; long sequences take the
// chunked form (delta_rule_chunked.cu), the inputs come from delta_net_inputs.cu.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <string>

#include "backend/cuda/runtime/check.h"
#include "backend/cuda/kernels/delta_rule/delta_rule_chunked.h"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/primitives/tensor_core.cuh"
#include "backend/delta_rule/gated_delta_rule.h"
#include "backend/variants.h"

namespace tf::cuda {

namespace {

// Sums over the G row groups of a warp (the lane bits above the column groups'): the same bits in
// every lane of a column. N sums at once, their shuffles interleaved, so each extra sum costs no
// extra latency.
template <int G, int N>
__device__ __forceinline__ void row_group_sums(float (&x)[N]) {
#pragma unroll
  for (int m = 32 / G; m <= 16; m *= 2) {
    float other[N];
#pragma unroll
    for (int e = 0; e < N; ++e) other[e] = __shfl_xor_sync(0xffffffffu, x[e], m);
#pragma unroll
    for (int e = 0; e < N; ++e) x[e] = x[e] + other[e];
  }
}

// A dot product of R register rows in four independent chains (the contract's sum model holds
// for any order), so its latency is R/4 dependent fmas, not R.
template <int R>
__device__ __forceinline__ float dot_rows(const float (&x)[R], const float (&y)[R]) {
  constexpr int L = R < 4 ? R : 4;
  float acc[L];
#pragma unroll
  for (int l = 0; l < L; ++l) acc[l] = x[l] * y[l];
#pragma unroll
  for (int r = L; r < R; ++r) acc[r % L] = __fmaf_rn(x[r], y[r], acc[r % L]);
  if constexpr (L == 4) return (acc[0] + acc[1]) + (acc[2] + acc[3]);
  else if constexpr (L == 2) return acc[0] + acc[1];
  else return acc[0];
}

// Warp schedulers an SM (sm_90): a prompt's recurrence is laid out for one warp on each.
constexpr int kSchedulersPerSm = 4;

// Tokens per staging buffer; three buffers rotate (cp.async), up to two chunks ahead of the one in use.
constexpr int kChunk = 8;
constexpr int kBuffers = 3;

// A staging buffer's floats: k and q rows [kChunk][2][dk], v [kChunk][cols], g [kChunk], beta [kChunk].
__host__ __device__ constexpr int staged_floats(int dk, int cols) { return kChunk * (2 * dk + cols + 2); }

// R rows of a staged k or q row from p, this lane's row group's first (row `first`), zeros past dk.
// FULL: dk == G R is known when compiling, so the vector reads need no branch; otherwise they serve
// a dk of exactly G R, which every row group reads whole.
template <int R, int G, bool FULL>
__device__ __forceinline__ void staged_rows(const float* p, int first, int dk, float (&x)[R]) {
  auto vector_reads = [&] {  // every row real
#pragma unroll
    for (int r = 0; r < R; r += 4) {
      const float4 a = *reinterpret_cast<const float4*>(p + r);
      x[r] = a.x, x[r + 1] = a.y, x[r + 2] = a.z, x[r + 3] = a.w;
    }
  };
  if constexpr (FULL) {
    static_assert(R % 4 == 0, "whole float4 rows");
    vector_reads();
  } else {
    if constexpr (R % 4 == 0) {
      if (dk == G * R) return vector_reads();
    }
#pragma unroll
    for (int r = 0; r < R; ++r) x[r] = first + r < dk ? p[r] : 0.0f;
  }
}

// One warp per (sequence, value head, 32 / G x C state columns): lane = 32 / G x row_group + column
// group, each lane keeps R rows of C columns of S in registers (G row groups cover dk <= G R); fewer
// row groups mean fewer warps and shuffle levels for the same arithmetic. Per token t:
//   S *= exp(g_t); kv = S^T k_t; d = (v_t - kv) beta_t; S += k_t d^T; o_t = bf16(S^T q_t)
// The kv sums come from dots one token ahead (below), reduced together with the previous token's
// output sums, so a token's critical path is a few scalar ops and one fma, with the dots and the
// shuffle tree beside it. A column's arithmetic is the same whatever C, so C only trades warps for
// work a warp. Inputs are staged into shared memory up to two chunks ahead, so no token waits for a
// global load. Sequences of chunked_from tokens or more are the chunked form's.
template <int R, bool FULL, int C, int G>
__global__ void gated_delta_rule_kernel(const float* q, const float* k, const float* v, const float* beta,
                                        const float* g, SeqTable seqs, uint16_t* o, int Hk, int dk, int Hv, int dv,
                                        bool rows16, bool v16, bool o_pairs, int chunked_from) {
  constexpr int kGroups = 32 / G;  // column groups a warp
  constexpr int kCols = kGroups * C;
  static_assert(kChunk % 2 == 0, "whole chunks are token pairs");
  static_assert(kChunk * kCols / 4 <= 32, "one 16-byte v copy a lane");
  extern __shared__ __align__(16) float staged[];  // kBuffers staging buffers
  const int lane = threadIdx.x, gi = lane / kGroups, group = lane % kGroups;
  const int h = blockIdx.y, hk = h / (Hv / Hk), xb = blockIdx.x;
  const int j0 = xb * kCols + C * group;  // this lane's columns j0 .. j0 + C - 1
  // A block takes sequences blockIdx.z, + gridDim.z, ... one after another (each one's bytes as alone).
  auto one_sequence = [&](int s) {
    const int t0 = seqs.offsets[s], t1 = seqs.offsets[s + 1], T = t1 - t0;
    if (T == 0 || T >= chunked_from) return;
    const int stride = staged_floats(dk, kCols), chunks = (T + kChunk - 1) / kChunk;
    const int v_at = 2 * kChunk * dk, g_at = v_at + kChunk * kCols, beta_at = g_at + kChunk;

    // Every lane issues its share of chunk c's copies, as one commit group (empty past the end).
    // A lane copies the same pieces of every token's rows (at most kPieces 16-byte pieces a row), so
    // the per-token cost is its copies and three pointer steps.
    constexpr int kPieces = (G * R / 4 + 31) / 32;
    constexpr int kVPieces = kCols / 4;  // 16-byte pieces of a token's v columns
    const int64_t row_step = int64_t(Hk) * dk;
    auto stage = [&](int c) {
      if (c < chunks) {
        float* base = staged + (c % kBuffers) * stride;
        const int tc = t0 + c * kChunk, n = min(kChunk, t1 - tc);
        const float* kt = k + (int64_t(tc) * Hk + hk) * dk;
        const float* qt = q + (int64_t(tc) * Hk + hk) * dk;
        float* dst = base;
        if (rows16) {
          for (int i = 0; i < n; ++i, kt += row_step, qt += row_step, dst += 2 * dk) {
#pragma unroll
            for (int e = 0; e < kPieces; ++e) {
              const int p = 4 * (lane + 32 * e);
              if (p < dk) {
                cp_async_16(dst + p, kt + p);
                cp_async_16(dst + dk + p, qt + p);
              }
            }
          }
        } else {
          for (int i = 0; i < n; ++i, kt += row_step, qt += row_step, dst += 2 * dk)
            for (int p = lane; p < dk; p += 32) {
              cp_async_4(dst + p, kt + p);
              cp_async_4(dst + dk + p, qt + p);
            }
        }
        const int c0 = xb * kCols;
        if (v16) {  // lane = kVPieces * token + piece
          if (lane < kVPieces * n)
            cp_async_16(base + v_at + 4 * lane,
                        v + (int64_t(tc + lane / kVPieces) * Hv + h) * dv + c0 + 4 * (lane % kVPieces));
        } else {
          for (int p = lane; p < n * kCols; p += 32)
            if (c0 + p % kCols < dv)
              cp_async_4(base + v_at + p, v + (int64_t(tc + p / kCols) * Hv + h) * dv + c0 + p % kCols);
        }
        if (lane < n) {  // g and beta: lane = token
          const int64_t th = int64_t(tc + lane) * Hv + h;
          cp_async_4(base + g_at + lane, g + th);
          cp_async_4(base + beta_at + lane, beta + th);
        }
      }
      cp_async_commit();
    };

    stage(0);
    stage(1);
    cp_async_wait<1>();
    __syncwarp();

    // Token t's kv sums need S_{t-1}, which needs d_{t-1}; but S_{t-1}^T k_t = e_{t-1} S_{t-2}^T k_t +
    // (k_{t-1} . k_t) d_{t-1}, so the dots and their shuffle tree run one token ahead, on the state
    // before the update: a token's chain is a few scalar ops and one fma a state element.
    float S[C][R], kr[R], qprev[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      qprev[r] = 0.0f;
#pragma unroll
      for (int j = 0; j < C; ++j) S[j][r] = 0.0f;
    }
    staged_rows<R, G, FULL>(staged + gi * R, gi * R, dk, kr);
    // P = S_{t-2}^T k_t (per column), kappa = k_{t-1} . k_t, d_{t-1}, e_{t-1} = exp(g_{t-1}): all zero
    // before the first token (S starts at zero)
    float P[C], dprev[C], kappa = 0.0f, eprev = 0.0f;
    bool has[C];
#pragma unroll
    for (int j = 0; j < C; ++j) P[j] = dprev[j] = 0.0f, has[j] = j0 + j < dv;
    const bool pairs = C == 2 && has[C - 1] && o_pairs;
    const int64_t o_step = int64_t(Hv) * dv;
    uint16_t* orow = o + (int64_t(t0) * Hv + h) * dv + j0;  // token t - 1's output row
    auto store = [&](const float* out) {
      if (gi != 0) return;
      if (pairs) {
        *reinterpret_cast<uint32_t*>(orow) = uint32_t(st_bf16(out[0])) | uint32_t(st_bf16(out[C - 1])) << 16;
      } else {
#pragma unroll
        for (int j = 0; j < C; ++j)
          if (has[j]) orow[j] = st_bf16(out[j]);
      }
    };
    float kb[R], qb[R];  // the other halves of the (k_t, k_{t+1}) and (q_{t-1}, q_t) pairs
    // What a chunk's tokens share, made once a chunk: its buffer and the next one's, its token count,
    // and the k row its last token reads next (the next chunk's first, or its own after the last).
    struct Chunk {
      int c, n;
      bool last;
      const float *cur, *nxt, *tail_k;
    };
    // Token i of chunk ck with k_t in kcur, q_{t-1} in qold; leaves k_{t+1} in knext, q_t in qnew. Two
    // tokens a loop pass swap the arrays' roles, so no row is copied between registers.
    auto token = [&](const Chunk& ck, int i, float (&kcur)[R], float (&knext)[R], float (&qold)[R],
                     float (&qnew)[R]) {
      const int c = ck.c, n = ck.n;
      const float* cur = ck.cur;
      if (i == kChunk - 1 && !ck.last) {
        // Token i + 1 is the next chunk's first: it must have landed. Chunk c - 1's buffer is
        // free (its last reads were a chunk ago), so chunk c + 2 is staged into it first.
        __syncwarp();
        stage(c + 2);
        cp_async_wait<1>();
        __syncwarp();
      }
      // Token i's q row, v columns, beta and g; the next token's k row: in this chunk, the next chunk's
      // first, or this token's own after the last (its sums are not used).
      const float* qp = cur + (2 * i + 1) * dk + gi * R;
      const float* vp = cur + v_at + i * kCols + C * group;
      const float b = cur[beta_at + i], gt = cur[g_at + i];
      const float* kn_at = i + 1 < n ? qp + dk : ck.tail_k;
      staged_rows<R, G, FULL>(qp, gi * R, dk, qnew);
      staged_rows<R, G, FULL>(kn_at, gi * R, dk, knext);
      // on S_{t-1}, before this token's update: S_{t-1}^T k_{t+1}, token t - 1's output, k_t . k_{t+1}
      float sums[2 * C + 1];
#pragma unroll
      for (int j = 0; j < C; ++j) sums[j] = dot_rows<R>(S[j], knext), sums[C + j] = dot_rows<R>(S[j], qold);
      sums[2 * C] = dot_rows<R>(kcur, knext);
      const float e = expf(gt);
      float d[C];
#pragma unroll
      for (int j = 0; j < C; ++j) {
        const float kv = e * (eprev * P[j] + kappa * dprev[j]);
        d[j] = ((has[j] ? vp[j] : 0.0f) - kv) * b;
      }
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < C; ++j) S[j][r] = __fmaf_rn(kcur[r], d[j], S[j][r] * e);
      row_group_sums<G, 2 * C + 1>(sums);
      if (c + i > 0) {
        store(sums + C);
        orow += o_step;
      }
#pragma unroll
      for (int j = 0; j < C; ++j) P[j] = sums[j], dprev[j] = d[j];
      kappa = sums[2 * C];
      eprev = e;
    };
    // k_t alternates between kr and kb, q_{t-1} between qprev and qb; a chunk's token count is even
    // but for the last chunk's, whose odd token leaves the pair's halves in kb and qb
    bool swapped = false;
    int buf = 0;  // chunk c's buffer, c % kBuffers
    for (int c = 0; c < chunks; ++c) {
      const int nb = buf + 1 == kBuffers ? 0 : buf + 1;
      Chunk ck{c, min(kChunk, T - c * kChunk), c + 1 == chunks, staged + buf * stride, staged + nb * stride, nullptr};
      ck.tail_k = ck.last ? ck.cur + 2 * (ck.n - 1) * dk + gi * R : ck.nxt + gi * R;
      for (int i = 0; i < ck.n; i += 2) {
        token(ck, i, kr, kb, qprev, qb);
        if (i + 1 < ck.n) token(ck, i + 1, kb, kr, qb, qprev);
        else swapped = true;
      }
      buf = nb;
    }
    if (swapped)
#pragma unroll
      for (int r = 0; r < R; ++r) qprev[r] = qb[r];
    // the last token's output, on the final state
    float last[C];
#pragma unroll
    for (int j = 0; j < C; ++j) last[j] = dot_rows<R>(S[j], qprev);
    row_group_sums<G, C>(last);
    store(last);
    cp_async_wait<0>();  // no copy outlives the block, nor lands in the next sequence's buffers
    __syncwarp();
  };
  for (int s = blockIdx.z; s < seqs.count; s += gridDim.z) one_sequence(s);
}

// TF_DELTA_RULE=recurrent or chunked puts every sequence on one form (to compare the forms).
int delta_rule_chunked_from() {
  if (variant_is<Variant::delta_rule>("recurrent")) return INT_MAX;
  return variant_is<Variant::delta_rule>("chunked") ? 1 : int(kDeltaRuleChunkedFrom);
}

// The kernel for R rows a lane in G row groups (FULL: dk == G R), allowed (once) the shared memory
// its largest dk stages.
template <int R, bool FULL = false, int C = 2, int G = 8>
auto recurrent_kernel() {
  static const bool allowed = [] {
    const size_t most = kBuffers * sizeof(float) * static_cast<size_t>(staged_floats(G * R, 32 / G * C));
    if (most > 48 * 1024)
      TF_CUDA(cudaFuncSetAttribute(gated_delta_rule_kernel<R, FULL, C, G>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, int(most)));
    return true;
  }();
  (void)allowed;
  return gated_delta_rule_kernel<R, FULL, C, G>;
}

}  // namespace

void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                      const SeqOffsets& seq_offsets, Tensor& o) {
  int Hk = int(q.dim(1)), dk = int(q.dim(2)), Hv = int(v.dim(1)), dv = int(v.dim(2));
  if (q.dim(0) == 0 || Hv == 0 || dv == 0) return;
  if (Hk == 0 || Hv % Hk != 0)
    fail("gated_delta_rule: value heads (" + std::to_string(Hv) + ") must be a multiple of key heads (" +
         std::to_string(Hk) + ")");
  if (dk > 256) fail("gated_delta_rule: the CUDA kernel holds key head dims up to 256, got " + std::to_string(dk));
  SeqTable seqs = make_seq_table("gated_delta_rule", seq_offsets);
  // A sequence's form depends on its own length only, so packing never changes its bytes.
  const int chunked_from = delta_rule_chunked_from();
  bool any_long = false, any_short = false;
  for (int s = 0; s < seqs.count; ++s) {
    const int n = seqs.offsets[s + 1] - seqs.offsets[s];
    any_long |= n >= chunked_from;
    any_short |= n > 0 && n < chunked_from;
  }
  if (any_long) launch_delta_rule_chunked(q, k, v, beta, g, seqs, chunked_from, o);
  if (!any_short) return;
  auto aligned = [](const void* p, uintptr_t a) { return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0; };
  // 16-byte k/q copies, 4-byte output pairs where the shapes and addresses allow
  const bool rows16 = dk % 4 == 0 && aligned(q.data, 16) && aligned(k.data, 16);
  const bool o_pairs = dv % 2 == 0 && aligned(o.data, 4);
  // dk = 128: a lane holds 32 rows of one column (4 row groups, one warp a scheduler for a prompt);
  // TF_RECURRENCE_LAYOUT=16x1 or 16x2 gives a lane 16 rows of one or two columns (to compare)
  const bool rows32 = variant_is<Variant::recurrence_layout>("32x1");
  const bool rows16_one_column = variant_is<Variant::recurrence_layout>("16x1");
  auto launch = [&](auto kernel, int C, int G = 8) {
    const int cols = 32 / G * C;
    const int xs = (dv + cols - 1) / cols;
    // Packed sequences run one after another in each block where one sequence's warps already give
    // every scheduler one: co-resident sequences of unequal length leave some schedulers two warps.
    const int slots = std::clamp(kSchedulersPerSm * sm_count() / std::max(1, xs * Hv), 1, seqs.count);
    const dim3 grid(xs, Hv, slots);
    const size_t smem = kBuffers * sizeof(float) * static_cast<size_t>(staged_floats(dk, cols));
    const bool v16 = dv % cols == 0 && aligned(v.data, 16);
    kernel<<<grid, 32, smem, stream()>>>(q.ptr<float>(), k.ptr<float>(), v.ptr<float>(), beta.ptr<float>(),
                                         g.ptr<float>(), seqs, static_cast<uint16_t*>(o.data), Hk, dk, Hv, dv, rows16,
                                         v16, o_pairs, chunked_from);
  };
  if (dk <= 8) launch(recurrent_kernel<1>(), 2);
  else if (dk <= 16) launch(recurrent_kernel<2>(), 2);
  else if (dk <= 32) launch(recurrent_kernel<4>(), 2);
  else if (dk <= 64) launch(recurrent_kernel<8>(), 2);
  else if (dk == 128 && rows32) launch(recurrent_kernel<32, true, 1, 4>(), 1, 4);
  else if (dk == 128 && rows16_one_column) launch(recurrent_kernel<16, true, 1>(), 1);
  else if (dk == 128) launch(recurrent_kernel<16, true>(), 2);
  else if (dk <= 128) launch(recurrent_kernel<16>(), 2);
  else launch(recurrent_kernel<32, false, 1>(), 1);  // two columns of 32 rows would spill
  TF_CUDA_LAUNCH("gated_delta_rule_kernel");
}

}  // namespace tf::cuda
