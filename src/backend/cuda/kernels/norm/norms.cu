// RMSNorms on CUDA: zero-centred (optionally fused with the residual add ahead of it, or with gated
// attention's split and RoPE around it) with a plain weight, and the DeltaNet's gated norm. One group of threads per
// row; each thread sums its strided elements in order, then a fixed butterfly combines the group,
// so every run gives the same bits.
#include <string>

#include "backend/cuda/runtime/check.h"
#include "backend/cuda/primitives/dependent_launch.cuh"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/attention/attention_query_key_prep.h"
#include "backend/attention/split_query_gate.h"
#include "backend/norm/rms_norm.h"
#include "backend/norm/rms_norm_gated.h"
#include "backend/norm/rms_norm_modulate.h"
#include "backend/rope/rope.h"

namespace tf::cuda {

namespace {

constexpr int kBlock = 256;

// Sum over a group of `tpr` threads (a warp, or the whole block); all threads get the result.
template <int tpr>
__device__ __forceinline__ float row_sum(float v, float* scratch) {
  if constexpr (tpr <= 32) {
    return group_sum<tpr>(v);
  } else {
    v = group_sum<32>(v);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float s = 0.0f;
    const int first = (threadIdx.x / tpr) * (tpr / 32);  // this row's first warp
#pragma unroll
    for (int w = 0; w < tpr / 32; ++w) s = s + scratch[first + w];
    __syncthreads();
    return s;
  }
}

// Which element of a row a thread's slot n holds: slots come in pieces of V neighbours (V = 8: one
// 16-byte access, V = 4: one 8-byte access), a piece per thread in turn.
template <int tpr, int V>
__device__ __forceinline__ int slot_index(int n, int lane) {
  return (n / V) * tpr * V + lane * V + n % V;
}

// N values of a row into v (V > 1: whole pieces of V, the row exactly N * tpr long; V = 1: zeros past d).
template <int tpr, int N, int V>
__device__ __forceinline__ void load_slots(const uint16_t* row, int lane, int d, float (&v)[N]) {
#pragma unroll
  for (int p = 0; p < N / V; ++p) {
    const int i = slot_index<tpr, V>(p * V, lane);
    if constexpr (V > 1) {
      float part[V];
      ld_bf16x<V>(row + i, part);
#pragma unroll
      for (int e = 0; e < V; ++e) v[p * V + e] = part[e];
    } else {
      v[p] = i < d ? ld_bf16(row, i) : 0.0f;
    }
  }
}

// A product's k-share sums at the same slots, rounded to bf16 as the product would (zeros past d for V = 1).
template <int tpr, int N, int V>
__device__ __forceinline__ void load_share_slots(const float* row, int shares, int64_t stride, int lane, int d,
                                                 float (&v)[N]) {
#pragma unroll
  for (int p = 0; p < N / V; ++p) {
    const int i = slot_index<tpr, V>(p * V, lane);
    float part[V];
    if (V > 1 || i < d) ld_share_sums_bf16<V>(row + i, shares, stride, part);
#pragma unroll
    for (int e = 0; e < V; ++e) v[p * V + e] = V > 1 || i < d ? part[e] : 0.0f;
  }
}

// The N values back as bf16, the same slots (nothing past d).
template <int tpr, int N, int V>
__device__ __forceinline__ void store_slots(uint16_t* row, int lane, int d, const float (&v)[N]) {
#pragma unroll
  for (int p = 0; p < N / V; ++p) {
    const int i = slot_index<tpr, V>(p * V, lane);
    if constexpr (V > 1) {
      float part[V];
#pragma unroll
      for (int e = 0; e < V; ++e) part[e] = v[p * V + e];
      st_bf16x<V>(row + i, part);
    } else {
      if (i < d) row[i] = st_bf16(v[p]);
    }
  }
}

// y = bf16((x * r) * (1 + w)), r = 1 / sqrt(sum(x^2) / d + eps), or (PLAIN) y = bf16(bf16(x * r) * w), or
// (PLAIN, shift given) y = bf16(((x * r) * w) * (1 + scale) + shift), fp32 throughout;
// with `delta`, first h = bf16(h + delta) (with `gate`, h = bf16(h + delta * gate), no fma), or with
// `shares` (a product's k-share sums [share_count][rows][d]) first h = bf16(h + bf16(their sum)).
// A thread's N elements (pieces of V) are loaded at once and kept in registers (d <= N * tpr); rows
// of 3,072 (the transformer's) at 64 registers, four blocks an SM, so enough rows are in flight.
template <int tpr, int N, int V, bool PLAIN>
__global__ void __launch_bounds__(kBlock, N * tpr == 3072 ? 4 : 1) rms_norm_rows_kernel(uint16_t* x, const uint16_t* delta, const uint16_t* gate, const float* shares, int share_count,
                                     const void* w, bool w_f32, float eps, uint16_t* y, int64_t rows, int d,
                                     const uint16_t* shift, const uint16_t* scale) {
  allow_dependent_launch();  // a weight-streaming product after this one asks for its first weights now
  __shared__ float scratch[kBlock / 32];
  const int rows_per_block = kBlock / tpr;
  int64_t row = blockIdx.x * int64_t(rows_per_block) + threadIdx.x / tpr;
  const int lane = threadIdx.x % tpr;
  const bool live = row < rows;
  uint16_t* xr = x + (live ? row : 0) * d;
  float v[N];
  load_slots<tpr, N, V>(xr, lane, d, v);
  if ((delta || shares) && live) {
    float e[N];
    if (shares) load_share_slots<tpr, N, V>(shares + row * d, share_count, rows * d, lane, d, e);
    else load_slots<tpr, N, V>(delta + row * d, lane, d, e);
    if (gate) {
#pragma unroll
      for (int p = 0; p < N / V; ++p) {
        const int i = slot_index<tpr, V>(p * V, lane);
        float g[V];
        if constexpr (V > 1) ld_bf16x<V>(gate + i, g);
        else g[0] = i < d ? ld_bf16(gate, i) : 0.0f;
#pragma unroll
        for (int k = 0; k < V; ++k) v[p * V + k] = round_bf16(__fadd_rn(v[p * V + k], __fmul_rn(e[p * V + k], g[k])));
      }
    } else {
#pragma unroll
      for (int n = 0; n < N; ++n) v[n] = round_bf16(v[n] + e[n]);
    }
    store_slots<tpr, N, V>(xr, lane, d, v);
  }
  float ss = 0.0f;
#pragma unroll
  for (int n = 0; n < N; ++n)
    if (slot_index<tpr, V>(n, lane) < d) ss = ss + v[n] * v[n];
  ss = row_sum<tpr>(ss, scratch);
  if (!live) return;
  const float r = 1.0f / sqrtf(ss / static_cast<float>(d) + eps);
  uint16_t* yr = y + row * d;
  // A piece at a time, the weights and the modulation's rows (cached, shared by every row) read only
  // after the sum: few live registers, so more rows of x in flight an SM.
#pragma unroll
  for (int p = 0; p < N / V; ++p) {
    const int i = slot_index<tpr, V>(p * V, lane);
    if (V == 1 && i >= d) break;
    float wv[V], sh[V], sc[V], out[V];
    if constexpr (V > 1) {
      if (!w_f32) ld_bf16x<V>(static_cast<const uint16_t*>(w) + i, wv);
      else
#pragma unroll
        for (int e = 0; e < V; ++e) wv[e] = ld_weight(w, w_f32, i + e);
      if (shift) ld_bf16x<V>(shift + i, sh), ld_bf16x<V>(scale + i, sc);
    } else {
      wv[0] = ld_weight(w, w_f32, i);
      if (shift) sh[0] = ld_bf16(shift, i), sc[0] = ld_bf16(scale, i);
    }
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const float a = v[p * V + e];
      // the modulated norm rounds once, at the store; the products are not contracted (the CPU's bytes)
      if (shift) out[e] = __fadd_rn(__fmul_rn(__fmul_rn(__fmul_rn(a, r), wv[e]), __fadd_rn(1.0f, sc[e])), sh[e]);
      else out[e] = PLAIN ? round_bf16(a * r) * wv[e] : (a * r) * (1.0f + wv[e]);
    }
    if constexpr (V > 1) st_bf16x<V>(yr + i, out);
    else yr[i] = st_bf16(out[0]);
    asm volatile("" ::: "memory");  // the next piece's reads stay after this store: registers, not loads, bound
  }
}

// Gated attention's query and key rows (backend/attention/attention_query_key_prep.h), one warp a row of d =
// 32 N elements in pieces of 8: the q rows (qg's query halves, which also copy their gate halves)
// first, then the k rows. The norm is rms_norm_rows_kernel<32, N, 8, false>'s arithmetic; RoPE's
// pairs (i, i + half) for 2 half <= 256 and half in eights sit in lanes shift apart, the same slot.
struct QueryKeyRows {
  const uint16_t *qg, *kraw, *cos, *sin;
  const void *q_norm, *k_norm;
  bool q_f32, k_f32;
  SeqTable seqs;
  uint16_t *q, *k, *gate;
  int64_t q_rows, k_rows;
  int hq, hkv, d, half;
  float eps;
};

template <int N>
__global__ void attention_query_key_prep_kernel(const __grid_constant__ QueryKeyRows a) {
  constexpr int V = 8;
  const int64_t row = blockIdx.x * int64_t(kBlock / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= a.q_rows + a.k_rows) return;  // a whole warp: its sums are its own
  const bool is_q = row < a.q_rows;
  const int64_t r = is_q ? row : row - a.q_rows, t = r / (is_q ? a.hq : a.hkv);
  const int d = a.d;
  const uint16_t* src = is_q ? a.qg + r * 2 * d : a.kraw + r * d;  // qg per head: query, then gate
  float v[N], wv[N];
  load_slots<32, N, V>(src, lane, d, v);
#pragma unroll
  for (int n = 0; n < N; ++n)
    wv[n] = is_q ? ld_weight(a.q_norm, a.q_f32, slot_index<32, V>(n, lane))
                 : ld_weight(a.k_norm, a.k_f32, slot_index<32, V>(n, lane));
  if (is_q)
#pragma unroll
    for (int p = 0; p < N / V; ++p) {
      const int i = slot_index<32, V>(p * V, lane);
      *reinterpret_cast<uint4*>(a.gate + r * d + i) = *reinterpret_cast<const uint4*>(src + d + i);
    }
  float ss = 0.0f;
#pragma unroll
  for (int n = 0; n < N; ++n) ss = ss + v[n] * v[n];
  ss = group_sum<32>(ss);
  const float rs = 1.0f / sqrtf(ss / static_cast<float>(d) + a.eps);
  float out[N];
#pragma unroll
  for (int n = 0; n < N; ++n) out[n] = round_bf16((v[n] * rs) * (1.0f + wv[n]));
  const int64_t pos = t - a.seqs.offsets[seq_of(a.seqs, static_cast<int>(t))];
  const int half = a.half, shift = half / V;
  const int partner = lane < shift ? lane + shift : lane < 2 * shift ? lane - shift : lane;
#pragma unroll
  for (int n = 0; n < V; ++n) {  // the first piece holds every rotated element
    const float other = __shfl_sync(0xffffffffu, out[n], partner);
    const int i = slot_index<32, V>(n, lane);
    if (i >= 2 * half) continue;
    const int f = i < half ? i : i - half;
    const float c = ld_bf16(a.cos, pos * half + f), s = ld_bf16(a.sin, pos * half + f);
    out[n] = i < half ? round_bf16(out[n] * c) + round_bf16(-other * s)
                      : round_bf16(out[n] * c) + round_bf16(other * s);
  }
  store_slots<32, N, V>((is_q ? a.q : a.k) + r * d, lane, d, out);
}

// n = bf16(x * r); t = bf16(w * n) for bf16 w (exact fp32 product for f32 w); y = bf16(t * silu(z)).
// One warp per row; a lane's N elements (pieces of V) of x, z and w are loaded at once (d <= 32 N).
template <int N, int V>
__global__ void rms_norm_gated_kernel(const uint16_t* x, const uint16_t* z, const void* w, bool w_f32, float eps,
                                      uint16_t* y, int64_t rows, int d) {
  allow_dependent_launch();  // a weight-streaming product after this one asks for its first weights now
  int64_t row = blockIdx.x * int64_t(kBlock / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;  // whole warps leave together
  float xv[N], zv[N], wv[N];
  load_slots<32, N, V>(x + row * d, lane, d, xv);
  load_slots<32, N, V>(z + row * d, lane, d, zv);
#pragma unroll
  for (int n = 0; n < N; ++n) {
    const int i = slot_index<32, V>(n, lane);
    wv[n] = i < d ? ld_weight(w, w_f32, i) : 0.0f;
  }
  float ss = 0.0f;
#pragma unroll
  for (int n = 0; n < N; ++n)
    if (slot_index<32, V>(n, lane) < d) ss = ss + xv[n] * xv[n];
  ss = group_sum<32>(ss);
  const float r = 1.0f / sqrtf(ss / static_cast<float>(d) + eps);
  float out[N];
#pragma unroll
  for (int n = 0; n < N; ++n) {
    float nv = round_bf16(xv[n] * r);
    float t = wv[n] * nv;
    if (!w_f32) t = round_bf16(t);
    out[n] = t * silu32(zv[n]);
  }
  store_slots<32, N, V>(y + row * d, lane, d, out);
}

// The widest row the register-resident kernel holds.
constexpr int64_t kMaxRow = 32 * kBlock;

// What a fused residual add adds: bf16 rows (times a gate [d] where one is given), or a product's
// k-share sums (F32 [count][rows][d]).
struct ResidualDelta {
  const uint16_t* rows = nullptr;
  const uint16_t* gate = nullptr;
  const float* shares = nullptr;
  int share_count = 0;
};

// The modulation after a plain norm (rms_norm_modulate): none where shift is null.
struct Modulation {
  const uint16_t* shift = nullptr;
  const uint16_t* scale = nullptr;
};

template <int tpr, bool PLAIN>
void launch_norm_rows(uint16_t* x, ResidualDelta delta, const void* w, bool f32, float eps, uint16_t* y, int64_t rows,
                      int d, Modulation mod) {
  const unsigned blocks = static_cast<unsigned>(blocks_for(rows, kBlock / tpr));
  const int per = (d + tpr - 1) / tpr;
  auto go = [&](auto kernel) {
    kernel<<<blocks, kBlock, 0, stream()>>>(x, delta.rows, delta.gate, delta.shares, delta.share_count, w, f32, eps, y,
                                            rows, d, mod.shift, mod.scale);
  };
  // rows that are whole 16-byte pieces per thread take the vector kernel
  const bool pieces = d % (8 * tpr) == 0 && bf16x8_ok(d, {x, y}) && (!delta.rows || bf16x8_ok(d, {delta.rows})) &&
                      (!delta.gate || bf16x8_ok(d, {delta.gate})) &&
                      reinterpret_cast<uintptr_t>(delta.shares) % 16 == 0 && (f32 || bf16x8_ok(d, {w})) &&
                      (!mod.shift || bf16x8_ok(d, {mod.shift, mod.scale}));
  if (pieces && per == 8) go(rms_norm_rows_kernel<tpr, 8, 8, PLAIN>);
  else if (pieces && per == 16) go(rms_norm_rows_kernel<tpr, 16, 8, PLAIN>);
  else if (pieces && per == 24) go(rms_norm_rows_kernel<tpr, 24, 8, PLAIN>);
  else if (pieces && per == 32) go(rms_norm_rows_kernel<tpr, 32, 8, PLAIN>);
  else if (per <= 1) go(rms_norm_rows_kernel<tpr, 1, 1, PLAIN>);
  else if (per <= 2) go(rms_norm_rows_kernel<tpr, 2, 1, PLAIN>);
  else if (per <= 4) go(rms_norm_rows_kernel<tpr, 4, 1, PLAIN>);
  else if (per <= 8) go(rms_norm_rows_kernel<tpr, 8, 1, PLAIN>);
  else if (per <= 16) go(rms_norm_rows_kernel<tpr, 16, 1, PLAIN>);
  else go(rms_norm_rows_kernel<tpr, 32, 1, PLAIN>);
}

template <bool PLAIN = false>
void launch_norm(uint16_t* x, ResidualDelta delta, const Tensor& w, float eps, uint16_t* y, int64_t rows, int64_t d,
                 Modulation mod = {}) {
  if (rows == 0) return;
  if (d > kMaxRow)
    fail("rms_norm: the CUDA kernel holds rows of up to " + std::to_string(kMaxRow) + " elements, got " +
         std::to_string(d));
  const bool f32 = w.dtype == DType::F32;
  // rows of whole 16-byte pieces a thread: 256 threads where they divide the row so, else 128 (d = 3072)
  const bool half_block = d % (8 * kBlock) != 0 && d % (8 * kBlock / 2) == 0 && d / (kBlock / 2) <= 32;
  if (d >= 1024 && half_block)
    launch_norm_rows<kBlock / 2, PLAIN>(x, delta, w.data, f32, eps, y, rows, static_cast<int>(d), mod);
  else if (d >= 1024) launch_norm_rows<kBlock, PLAIN>(x, delta, w.data, f32, eps, y, rows, static_cast<int>(d), mod);
  else launch_norm_rows<32, PLAIN>(x, delta, w.data, f32, eps, y, rows, static_cast<int>(d), mod);
  TF_CUDA_LAUNCH("rms_norm_rows_kernel");
}

}  // namespace

void rms_norm_one_plus(const Tensor& x, const Tensor& w, float eps, Tensor& y) {
  // x is only read when no delta is given
  launch_norm(static_cast<uint16_t*>(x.data), ResidualDelta{}, w, eps, static_cast<uint16_t*>(y.data), x.dim(0),
                      x.dim(1));
}

void rms_norm_plain(const Tensor& x, const Tensor& w, float eps, Tensor& y) {
  launch_norm<true>(static_cast<uint16_t*>(x.data), ResidualDelta{}, w, eps, static_cast<uint16_t*>(y.data), x.dim(0),
                    x.dim(1));
}

void rms_norm_modulate(const Tensor& x, const Tensor& w, float eps, const Tensor& shift, const Tensor& scale, Tensor& y) {
  launch_norm<true>(static_cast<uint16_t*>(x.data), ResidualDelta{}, w, eps, static_cast<uint16_t*>(y.data), x.dim(0),
                    x.dim(1), {static_cast<const uint16_t*>(shift.data), static_cast<const uint16_t*>(scale.data)});
}

void residual_add_rms_norm_modulate(Tensor& h, const Tensor& d, const Tensor& gate, const Tensor& w, float eps,
                                    const Tensor& shift, const Tensor& scale, Tensor& y) {
  const ResidualDelta delta{.rows = static_cast<const uint16_t*>(d.data), .gate = static_cast<const uint16_t*>(gate.data)};
  launch_norm<true>(static_cast<uint16_t*>(h.data), delta, w, eps, static_cast<uint16_t*>(y.data), h.dim(0), h.dim(1),
                    {static_cast<const uint16_t*>(shift.data), static_cast<const uint16_t*>(scale.data)});
}

void residual_add_rms_norm_one_plus(Tensor& h, const Tensor& d, const Tensor& w, float eps, Tensor& y) {
  ResidualDelta delta;
  if (d.dtype == DType::F32) delta.shares = d.ptr<float>(), delta.share_count = static_cast<int>(d.dim(0));
  else delta.rows = static_cast<const uint16_t*>(d.data);
  launch_norm(static_cast<uint16_t*>(h.data), delta, w, eps, static_cast<uint16_t*>(y.data), h.dim(0), h.dim(1));
}

// One launch where every row is whole 16-byte pieces a lane (d = 256, 512, 768, 1024) and RoPE's
// pairs sit in the first piece (2 half <= 256, half in eights); else the four steps' kernels.
void attention_query_key_prep(const Tensor& qg, const Tensor& kraw, const Tensor& q_norm, const Tensor& k_norm,
                              float eps, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& q,
                              Tensor& k, Tensor& gate) {
  const int64_t T = q.dim(0), Hq = q.dim(1), Hkv = k.dim(1), d = q.dim(2), half = cos.dim(1);
  if (T == 0) return;
  bool aligned = true;
  for (const void* p : {qg.data, kraw.data, q.data, k.data, gate.data})
    aligned = aligned && reinterpret_cast<uintptr_t>(p) % 16 == 0;
  if (!aligned || d % 256 != 0 || d > 1024 || half % 8 != 0 || 2 * half > 256) {
    Tensor query = empty(DType::BF16, q.shape, Device::CUDA);
    cuda::split_query_gate(qg, query, gate);
    Tensor q_rows = q.reshaped({T * Hq, d}), k_rows = k.reshaped({T * Hkv, d});
    cuda::rms_norm_one_plus(query.reshaped({T * Hq, d}), q_norm, eps, q_rows);
    cuda::rms_norm_one_plus(kraw.reshaped({T * Hkv, d}), k_norm, eps, k_rows);
    cuda::rope_split_half(q, cos, sin, seq_offsets, q);
    return cuda::rope_split_half(k, cos, sin, seq_offsets, k);
  }
  QueryKeyRows a{};
  a.qg = static_cast<const uint16_t*>(qg.data), a.kraw = static_cast<const uint16_t*>(kraw.data);
  a.cos = static_cast<const uint16_t*>(cos.data), a.sin = static_cast<const uint16_t*>(sin.data);
  a.q_norm = q_norm.data, a.k_norm = k_norm.data;
  a.q_f32 = q_norm.dtype == DType::F32, a.k_f32 = k_norm.dtype == DType::F32;
  a.seqs = make_seq_table("attention_query_key_prep", seq_offsets);
  a.q = static_cast<uint16_t*>(q.data), a.k = static_cast<uint16_t*>(k.data);
  a.gate = static_cast<uint16_t*>(gate.data);
  a.q_rows = T * Hq, a.k_rows = T * Hkv, a.hq = static_cast<int>(Hq), a.hkv = static_cast<int>(Hkv);
  a.d = static_cast<int>(d), a.half = static_cast<int>(half), a.eps = eps;
  const unsigned blocks = blocks_for(a.q_rows + a.k_rows, kBlock / 32);
  switch (d / 32) {
    case 8: attention_query_key_prep_kernel<8><<<blocks, kBlock, 0, stream()>>>(a); break;
    case 16: attention_query_key_prep_kernel<16><<<blocks, kBlock, 0, stream()>>>(a); break;
    case 24: attention_query_key_prep_kernel<24><<<blocks, kBlock, 0, stream()>>>(a); break;
    default: attention_query_key_prep_kernel<32><<<blocks, kBlock, 0, stream()>>>(a); break;
  }
  TF_CUDA_LAUNCH("attention_query_key_prep_kernel");
}

void rms_norm_gated(const Tensor& x, const Tensor& z, const Tensor& w, float eps, Tensor& y) {
  int64_t rows = x.dim(0), d = x.dim(1);
  if (rows == 0) return;
  if (d > 32 * 32) fail("rms_norm_gated: the CUDA kernel holds rows of up to 1024 elements, got " + std::to_string(d));
  const unsigned blocks = blocks_for(rows, kBlock / 32);
  auto go = [&](auto kernel) {
    kernel<<<blocks, kBlock, 0, stream()>>>(static_cast<const uint16_t*>(x.data), static_cast<const uint16_t*>(z.data),
                                            w.data, w.dtype == DType::F32, eps, static_cast<uint16_t*>(y.data), rows,
                                            static_cast<int>(d));
  };
  const int64_t per = (d + 31) / 32;
  const bool pieces = d % (4 * 32) == 0 && per % 4 == 0 && reinterpret_cast<uintptr_t>(x.data) % 8 == 0 &&
                      reinterpret_cast<uintptr_t>(z.data) % 8 == 0 && reinterpret_cast<uintptr_t>(y.data) % 8 == 0;
  if (pieces && per == 4) go(rms_norm_gated_kernel<4, 4>);
  else if (pieces && per == 8) go(rms_norm_gated_kernel<8, 4>);
  else if (per <= 1) go(rms_norm_gated_kernel<1, 1>);
  else if (per <= 2) go(rms_norm_gated_kernel<2, 1>);
  else if (per <= 4) go(rms_norm_gated_kernel<4, 1>);
  else if (per <= 8) go(rms_norm_gated_kernel<8, 1>);
  else if (per <= 16) go(rms_norm_gated_kernel<16, 1>);
  else go(rms_norm_gated_kernel<32, 1>);
  TF_CUDA_LAUNCH("rms_norm_gated_kernel");
}

}  // namespace tf::cuda
