// The CPU linear layer: y = bf16(x w^T) with fp32 sums in one fixed order on every code path.
//
// x is first widened to fp32 in a "pair-split" layout: each block of 32 inputs k = 32b .. 32b+31 is
// stored as its 16 even-k values then its 16 odd-k values (zero padded to a whole block). A bf16
// weight block of 32 values read as 16 32-bit words gives the even-k floats by a 16-bit shift and
// the odd-k floats by masking the low half, so widening costs one instruction per 16 weights.
// Partial sum j (0..15) takes k = 32b + 2j, then 32b + 2j + 1, for b = 0, 1, ... in that order; the
// 16 partial sums are combined by the fixed tree of reduce16. Products of two bf16 values are exact
// in fp32, so fused multiply-add and multiply-then-add give the same bits (short of products below
// fp32's normal range), and the scalar, AVX2 and AVX-512 kernels agree byte for byte.
#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// gcc flags its own intrinsics' internal undefined vectors, and the ABI note on target functions.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wpsabi"

#include "backend/cpu/bf16_rows.h"
#include "backend/elementwise/residual_add.h"
#include "backend/elementwise/silu_gated_product.h"
#include "backend/elementwise/situ_gated_product.h"
#include "backend/linear/linear.h"
#include "backend/linear/linear_gated_product.h"
#include "backend/variants.h"
#include "core/parallel.h"

namespace tf::cpu {

namespace {

constexpr int64_t kBlock = 32;

inline float reduce16(const float* l) {
  float s8[8], s4[4];
  for (int i = 0; i < 8; ++i) s8[i] = l[i] + l[i + 8];
  for (int i = 0; i < 4; ++i) s4[i] = s8[i] + s8[i + 4];
  float s2a = s4[0] + s4[2], s2b = s4[1] + s4[3];
  return s2a + s2b;
}

// Inputs of one tile: C token rows of x (pair-split fp32) and R weight rows (bf16), `blocks` whole
// blocks read in place plus an optional zero-padded tail block per weight row.
template <int R, int C>
struct Tile {
  const float* x[C];
  const uint16_t* w[R];
  const uint16_t* tail[R];  // nullptr when K is a multiple of 32
  int64_t blocks;
  uint16_t* y[C];           // y[c] + r is output (token c, weight row r)
  const float* bias;        // bias[r] joins row r's sum before its rounding; nullptr for none
};

// The one rounding of a sum, after the bias (never adds a zero bias: -0 must stay -0).
template <int R, int C>
inline uint16_t finish(const Tile<R, C>& t, int r, const float* lane) {
  float sum = reduce16(lane);
  if (t.bias) sum = sum + t.bias[r];
  return st(sum);
}

template <int R, int C>
void tile_scalar(const Tile<R, C>& t) {
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float lane[16] = {};
      auto run = [&](const uint16_t* wb, const float* xb) {
        for (int j = 0; j < 16; ++j) {
          lane[j] = lane[j] + xb[j] * float_from_bf16_bits(wb[2 * j]);
          lane[j] = lane[j] + xb[16 + j] * float_from_bf16_bits(wb[2 * j + 1]);
        }
      };
      for (int64_t b = 0; b < t.blocks; ++b) run(t.w[r] + b * kBlock, t.x[c] + b * kBlock);
      if (t.tail[r]) run(t.tail[r], t.x[c] + t.blocks * kBlock);
      t.y[c][r] = finish(t, r, lane);
    }
}

#if defined(__x86_64__)
template <int R, int C>
__attribute__((target("avx2,fma"))) void tile_avx2(const Tile<R, C>& t) {
  __m256 lo[R][C], hi[R][C];  // partial sums 0..7 and 8..15
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) lo[r][c] = hi[r][c] = _mm256_setzero_ps();
  const __m256i high_half = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
  const int64_t total = t.blocks + (t.tail[0] ? 1 : 0);
  for (int64_t b = 0; b < total; ++b) {
    const int64_t xofs = b * kBlock;
    for (int r = 0; r < R; ++r) {
      const uint16_t* wb = b < t.blocks ? t.w[r] + b * kBlock : t.tail[r];
      __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb));
      __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 16));
      __m256 e0 = _mm256_castsi256_ps(_mm256_slli_epi32(w0, 16)), o0 = _mm256_castsi256_ps(_mm256_and_si256(w0, high_half));
      __m256 e1 = _mm256_castsi256_ps(_mm256_slli_epi32(w1, 16)), o1 = _mm256_castsi256_ps(_mm256_and_si256(w1, high_half));
      for (int c = 0; c < C; ++c) {
        const float* xb = t.x[c] + xofs;
        lo[r][c] = _mm256_fmadd_ps(_mm256_loadu_ps(xb), e0, lo[r][c]);
        lo[r][c] = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 16), o0, lo[r][c]);
        hi[r][c] = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 8), e1, hi[r][c]);
        hi[r][c] = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 24), o1, hi[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      alignas(32) float lane[16];
      _mm256_store_ps(lane, lo[r][c]);
      _mm256_store_ps(lane + 8, hi[r][c]);
      t.y[c][r] = finish(t, r, lane);
    }
}

// One block of 32 inputs for every (weight row, token) pair of a tile; always inlined so the
// accumulators stay in registers.
template <int R, int C>
__attribute__((target("avx512f"), always_inline)) inline void block_avx512(__m512 (&acc)[R][C],
                                                                           const uint16_t* const (&w)[R],
                                                                           const float* const (&x)[C]) {
  const __m512i high_half = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  for (int r = 0; r < R; ++r) {
    __m512i wv = _mm512_loadu_si512(w[r]);
    __m512 even = _mm512_castsi512_ps(_mm512_slli_epi32(wv, 16));
    __m512 odd = _mm512_castsi512_ps(_mm512_and_si512(wv, high_half));
    for (int c = 0; c < C; ++c) {
      acc[r][c] = _mm512_fmadd_ps(_mm512_loadu_ps(x[c]), even, acc[r][c]);
      acc[r][c] = _mm512_fmadd_ps(_mm512_loadu_ps(x[c] + 16), odd, acc[r][c]);
    }
  }
}

template <int R, int C>
__attribute__((target("avx512f"))) void tile_avx512(const Tile<R, C>& t) {
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  const uint16_t* w[R];
  const float* x[C];
  for (int r = 0; r < R; ++r) w[r] = t.w[r];
  for (int c = 0; c < C; ++c) x[c] = t.x[c];
  for (int64_t b = 0; b < t.blocks; ++b) {
    block_avx512<R, C>(acc, w, x);
    for (int r = 0; r < R; ++r) w[r] += kBlock;
    for (int c = 0; c < C; ++c) x[c] += kBlock;
  }
  if (t.tail[0]) {
    for (int r = 0; r < R; ++r) w[r] = t.tail[r];
    block_avx512<R, C>(acc, w, x);
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      alignas(64) float lane[16];
      _mm512_store_ps(lane, acc[r][c]);
      t.y[c][r] = finish(t, r, lane);
    }
}
#endif

LinearKernel detect() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return LinearKernel::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return LinearKernel::Avx2;
#endif
  return LinearKernel::Scalar;
}

// Rows of weights and tokens per tile, per kernel (register budget: R*C accumulators).
template <int R, int C>
void run_tile(LinearKernel k, const Tile<R, C>& t) {
#if defined(__x86_64__)
  if (k == LinearKernel::Avx512) return tile_avx512<R, C>(t);
  if (k == LinearKernel::Avx2) return tile_avx2<R, C>(t);
#endif
  (void)k;
  tile_scalar<R, C>(t);
}

constexpr int kRows = 4, kCols = 6;  // run_rows and the switch below cover 1..kRows x 1..kCols
static_assert(kRows == 4 && kCols == 6, "extend the tile dispatch switches with the tile shape");

// Dispatches a tile of r <= kRows weight rows and c <= kCols tokens to its compiled shape.
template <int R>
void run_rows(LinearKernel k, int c, const Tile<kRows, kCols>& full) {
  auto go = [&](auto cc) {
    constexpr int C = decltype(cc)::value;
    Tile<R, C> t;
    for (int i = 0; i < C; ++i) t.x[i] = full.x[i], t.y[i] = full.y[i];
    for (int i = 0; i < R; ++i) t.w[i] = full.w[i], t.tail[i] = full.tail[i];
    t.blocks = full.blocks;
    t.bias = full.bias;
    run_tile<R, C>(k, t);
  };
  switch (c) {
    case 1: go(std::integral_constant<int, 1>{}); break;
    case 2: go(std::integral_constant<int, 2>{}); break;
    case 3: go(std::integral_constant<int, 3>{}); break;
    case 4: go(std::integral_constant<int, 4>{}); break;
    case 5: go(std::integral_constant<int, 5>{}); break;
    default: go(std::integral_constant<int, 6>{}); break;
  }
}

}  // namespace

// TF_CPU_LINEAR's choices in LinearKernel's order, so a choice's index is its kernel.
static_assert(variants::choice_index(Variant::cpu_linear, "auto") == int(LinearKernel::Auto) &&
              variants::choice_index(Variant::cpu_linear, "scalar") == int(LinearKernel::Scalar) &&
              variants::choice_index(Variant::cpu_linear, "avx2") == int(LinearKernel::Avx2) &&
              variants::choice_index(Variant::cpu_linear, "avx512") == int(LinearKernel::Avx512));

LinearKernel linear_kernel_in_use() {
  static const LinearKernel best = detect();
  const auto asked = static_cast<LinearKernel>(variant(Variant::cpu_linear));
  if (asked == LinearKernel::Auto) return best;
  if (asked == LinearKernel::Avx512 && best != LinearKernel::Avx512) return best;
  if (asked == LinearKernel::Avx2 && best == LinearKernel::Scalar) return best;
  return asked;
}

const char* linear_kernel_name(LinearKernel k) {
  switch (k) {
    case LinearKernel::Auto: return "auto";
    case LinearKernel::Scalar: return "scalar";
    case LinearKernel::Avx2: return "avx2";
    case LinearKernel::Avx512: return "avx512";
  }
  return "?";
}

int64_t linear_k_shares(int64_t, int64_t, int64_t) { return 0; }

namespace {

// y as k-share sums (F32 [P, n, N]): each share's sum in linear's order, its range's k = 32b + 2j
// and 32b + 2j + 1 in partial sum j, then reduce16, unrounded. Scalar: the forward never asks the
// CPU for shares (linear_k_shares is 0); tests and the kernel contract do.
void k_share_sums(const Tensor& x, const Tensor& w, Tensor& y) {
  const int64_t P = y.dim(0), n = x.dim(0), K = x.dim(1), N = w.dim(0), range = K / P;
  const uint16_t* xp = bf16_ptr(x);
  const uint16_t* wp = bf16_ptr(w);
  float* yp = y.ptr<float>();
  parallel_for(P * n, [&](int64_t b, int64_t e) {
    for (int64_t pt = b; pt < e; ++pt) {
      const int64_t p = pt / n, t = pt % n, k0 = p * range;
      for (int64_t o = 0; o < N; ++o) {
        float lane[16] = {};
        for (int64_t k = k0; k < k0 + range; ++k) {
          const int j = static_cast<int>((k - k0) % kBlock / 2);
          lane[j] = lane[j] + ld(xp, t * K + k) * ld(wp, o * K + k);
        }
        yp[(p * n + t) * N + o] = reduce16(lane);
      }
    }
  });
}

// y = bf16(x w^T (+ bias)) on the widest kernel; bias: N fp32 values or null.
void product(const Tensor& x, const Tensor& w, const float* bias, Tensor& y) {
  const int64_t n = x.dim(0), K = x.dim(1), N = w.dim(0);
  if (n == 0 || N == 0) return;
  const int64_t blocks = K / kBlock, padded = (blocks + (K % kBlock ? 1 : 0)) * kBlock;
  const LinearKernel kernel = linear_kernel_in_use();

  // x widened to fp32, pair-split per block, zero padded: [n, padded].
  std::vector<float> xs(static_cast<size_t>(n * padded));
  const uint16_t* xp = bf16_ptr(x);
  parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      float* row = xs.data() + t * padded;
      std::fill(row, row + padded, 0.0f);
      for (int64_t k = 0; k < K; ++k) row[(k / kBlock) * kBlock + (k % 2) * 16 + (k % kBlock) / 2] = ld(xp, t * K + k);
    }
  });

  // Zero-padded tail block of every weight row, when K is not a multiple of 32.
  std::vector<uint16_t> tails;
  if (K % kBlock) {
    tails.assign(static_cast<size_t>(N * kBlock), 0);
    const uint16_t* wp = bf16_ptr(w);
    for (int64_t o = 0; o < N; ++o) std::memcpy(&tails[o * kBlock], wp + o * K + blocks * kBlock, (K % kBlock) * 2);
  }

  // Tokens per pass: the fp32 rows of one pass stay within about 2 MB of cache.
  const int64_t per_token = padded * static_cast<int64_t>(sizeof(float));
  const int64_t chunk = std::max<int64_t>(kCols, (2 << 20) / per_token / kCols * kCols);
  const int64_t row_blocks = (N + kRows - 1) / kRows;
  const uint16_t* wp = bf16_ptr(w);
  uint16_t* yp = bf16_ptr_mut(y);
  parallel_for(row_blocks, [&](int64_t rb0, int64_t rb1) {
    for (int64_t t0 = 0; t0 < n; t0 += chunk) {
      int64_t t1 = std::min(n, t0 + chunk);
      for (int64_t rb = rb0; rb < rb1; ++rb) {
        int64_t o0 = rb * kRows;
        int rows = static_cast<int>(std::min<int64_t>(kRows, N - o0));
        for (int64_t tt = t0; tt < t1; tt += kCols) {
          int cols = static_cast<int>(std::min<int64_t>(kCols, t1 - tt));
          Tile<kRows, kCols> tile{};
          for (int c = 0; c < cols; ++c) {
            tile.x[c] = xs.data() + (tt + c) * padded;
            tile.y[c] = yp + (tt + c) * N + o0;
          }
          for (int r = 0; r < rows; ++r) {
            tile.w[r] = wp + (o0 + r) * K;
            tile.tail[r] = tails.empty() ? nullptr : &tails[(o0 + r) * kBlock];
          }
          tile.blocks = blocks;
          tile.bias = bias ? bias + o0 : nullptr;
          switch (rows) {
            case 1: run_rows<1>(kernel, cols, tile); break;
            case 2: run_rows<2>(kernel, cols, tile); break;
            case 3: run_rows<3>(kernel, cols, tile); break;
            default: run_rows<4>(kernel, cols, tile); break;
          }
        }
      }
    }
  }, 1);
}

}  // namespace

void linear(const Tensor& x, const Tensor& w, Tensor& y) {
  if (y.dtype == DType::F32) return k_share_sums(x, w, y);
  product(x, w, nullptr, y);
}

void linear_bias(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) {
  std::vector<float> bias(static_cast<size_t>(w.dim(0)));
  for (int64_t o = 0; o < w.dim(0); ++o) bias[o] = ld_weight(b, o);
  product(x, w, bias.data(), y);
}

// The CPU streams each weight on its own; the bytes are linear's either way.
void linear_shared_input(const Tensor& x, std::span<const LinearPart> parts) {
  for (const LinearPart& p : parts) cpu::linear(x, *p.w, *p.y);
}

void linear_gated_product(const Tensor& x, const Tensor& w_gate, const Tensor& w_up, GatedActivation act, Tensor& y) {
  Tensor gate = empty(DType::BF16, y.shape, Device::CPU), up = empty(DType::BF16, y.shape, Device::CPU);
  cpu::linear(x, w_gate, gate);
  cpu::linear(x, w_up, up);
  if (act == GatedActivation::silu) cpu::silu_gated_product(gate, up, y);
  else cpu::situ_gated_product(up, gate, y);
}

void linear_gated_residual(const Tensor& x, const Tensor& w, const Tensor& gate, Tensor& h) {
  Tensor y = empty(DType::BF16, h.shape, Device::CPU);
  cpu::linear(x, w, y);
  cpu::residual_add_gated(h, y, gate);
}

}  // namespace tf::cpu
