#include "backend/cpu/gemm_f32.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tf::cpu::gemm {

int64_t packed_a_size(int64_t m, int64_t k_total) { return (m + MR - 1) / MR * MR * k_total; }
int64_t packed_b_size(int64_t kc, int64_t nc) { return (nc + NR - 1) / NR * NR * kc; }

namespace {

// The portable kernel: the same sums in the same order as the vector one.
void micro_kernel_portable(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool first, int mv,
                           int nv) {
  float acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) acc[r][j] = (!first && r < mv && j < nv) ? c[r * ldc + j] : 0.0f;
  for (int64_t k = 0; k < kc; ++k) {
    const float* ak = a + k * MR;
    const float* bk = b + k * NR;
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j) acc[r][j] = std::fma(ak[r], bk[j], acc[r][j]);
  }
  for (int r = 0; r < mv; ++r)
    for (int j = 0; j < nv; ++j) c[r * ldc + j] = acc[r][j];
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void micro_kernel_avx512(int64_t kc, const float* a, const float* b, float* c,
                                                            int64_t ldc, bool first, int mv, int nv) {
  static_assert(MR == 12 && NR == 32, "the AVX-512 kernel is written for 12 x 32 tiles");
  const __mmask16 m0 = nv >= 16 ? __mmask16(0xffff) : __mmask16((1u << nv) - 1);
  const __mmask16 m1 = nv >= 32 ? __mmask16(0xffff) : nv <= 16 ? __mmask16(0) : __mmask16((1u << (nv - 16)) - 1);
  __m512 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71, c80, c81, c90, c91, ca0,
      ca1, cb0, cb1;
#define TF_ROW_LOAD(R, X0, X1)                                                          \
  if (!first && R < mv) {                                                               \
    X0 = _mm512_maskz_loadu_ps(m0, c + R * ldc);                                         \
    X1 = _mm512_maskz_loadu_ps(m1, c + R * ldc + 16);                                    \
  } else {                                                                              \
    X0 = _mm512_setzero_ps();                                                           \
    X1 = _mm512_setzero_ps();                                                           \
  }
  TF_ROW_LOAD(0, c00, c01) TF_ROW_LOAD(1, c10, c11) TF_ROW_LOAD(2, c20, c21) TF_ROW_LOAD(3, c30, c31)
  TF_ROW_LOAD(4, c40, c41) TF_ROW_LOAD(5, c50, c51) TF_ROW_LOAD(6, c60, c61) TF_ROW_LOAD(7, c70, c71)
  TF_ROW_LOAD(8, c80, c81) TF_ROW_LOAD(9, c90, c91) TF_ROW_LOAD(10, ca0, ca1) TF_ROW_LOAD(11, cb0, cb1)
#undef TF_ROW_LOAD
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(b + k * NR);
    const __m512 b1 = _mm512_loadu_ps(b + k * NR + 16);
    const float* ak = a + k * MR;
#define TF_ROW_FMA(R, X0, X1)                           \
  {                                                     \
    const __m512 ar = _mm512_set1_ps(ak[R]);            \
    X0 = _mm512_fmadd_ps(ar, b0, X0);                   \
    X1 = _mm512_fmadd_ps(ar, b1, X1);                   \
  }
    TF_ROW_FMA(0, c00, c01) TF_ROW_FMA(1, c10, c11) TF_ROW_FMA(2, c20, c21) TF_ROW_FMA(3, c30, c31)
    TF_ROW_FMA(4, c40, c41) TF_ROW_FMA(5, c50, c51) TF_ROW_FMA(6, c60, c61) TF_ROW_FMA(7, c70, c71)
    TF_ROW_FMA(8, c80, c81) TF_ROW_FMA(9, c90, c91) TF_ROW_FMA(10, ca0, ca1) TF_ROW_FMA(11, cb0, cb1)
#undef TF_ROW_FMA
  }
#define TF_ROW_STORE(R, X0, X1)                         \
  if (R < mv) {                                         \
    _mm512_mask_storeu_ps(c + R * ldc, m0, X0);         \
    _mm512_mask_storeu_ps(c + R * ldc + 16, m1, X1);    \
  }
  TF_ROW_STORE(0, c00, c01) TF_ROW_STORE(1, c10, c11) TF_ROW_STORE(2, c20, c21) TF_ROW_STORE(3, c30, c31)
  TF_ROW_STORE(4, c40, c41) TF_ROW_STORE(5, c50, c51) TF_ROW_STORE(6, c60, c61) TF_ROW_STORE(7, c70, c71)
  TF_ROW_STORE(8, c80, c81) TF_ROW_STORE(9, c90, c91) TF_ROW_STORE(10, ca0, ca1) TF_ROW_STORE(11, cb0, cb1)
#undef TF_ROW_STORE
}

// AVX2: the 12 x 32 tile as four passes of 3 rows x 32 columns (12 ymm accumulators).
__attribute__((target("avx2,fma"))) void micro_kernel_avx2(int64_t kc, const float* a, const float* b, float* c,
                                                           int64_t ldc, bool first, int mv, int nv) {
  for (int r0 = 0; r0 < mv; r0 += 3) {
    __m256 acc[3][4];
    for (int r = 0; r < 3; ++r)
      for (int v = 0; v < 4; ++v) acc[r][v] = _mm256_setzero_ps();
    if (!first) {
      alignas(32) float tmp[3][NR] = {};
      for (int r = 0; r < 3 && r0 + r < mv; ++r)
        for (int j = 0; j < nv; ++j) tmp[r][j] = c[(r0 + r) * ldc + j];
      for (int r = 0; r < 3; ++r)
        for (int v = 0; v < 4; ++v) acc[r][v] = _mm256_load_ps(tmp[r] + 8 * v);
    }
    for (int64_t k = 0; k < kc; ++k) {
      const float* bk = b + k * NR;
      const __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8), b2 = _mm256_loadu_ps(bk + 16),
                   b3 = _mm256_loadu_ps(bk + 24);
      const float* ak = a + k * MR + r0;
      for (int r = 0; r < 3; ++r) {
        const __m256 ar = _mm256_broadcast_ss(ak + r);
        acc[r][0] = _mm256_fmadd_ps(ar, b0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(ar, b1, acc[r][1]);
        acc[r][2] = _mm256_fmadd_ps(ar, b2, acc[r][2]);
        acc[r][3] = _mm256_fmadd_ps(ar, b3, acc[r][3]);
      }
    }
    alignas(32) float out[3][NR];
    for (int r = 0; r < 3; ++r)
      for (int v = 0; v < 4; ++v) _mm256_store_ps(out[r] + 8 * v, acc[r][v]);
    for (int r = 0; r < 3 && r0 + r < mv; ++r)
      for (int j = 0; j < nv; ++j) c[(r0 + r) * ldc + j] = out[r][j];
  }
}

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

KernelChoice g_choice = KernelChoice::Best;

}  // namespace

bool set_kernel(KernelChoice k) {
#if defined(__x86_64__)
  if (k == KernelChoice::Avx512 && !cpu_has_avx512()) return false;
  if (k == KernelChoice::Avx2 && !cpu_has_avx2_fma()) return false;
#else
  if (k == KernelChoice::Avx512 || k == KernelChoice::Avx2) return false;
#endif
  g_choice = k;
  return true;
}

void micro_kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool first, int mv, int nv) {
#if defined(__x86_64__)
  switch (g_choice) {
    case KernelChoice::Best:
      if (cpu_has_avx512()) return micro_kernel_avx512(kc, a, b, c, ldc, first, mv, nv);
      if (cpu_has_avx2_fma()) return micro_kernel_avx2(kc, a, b, c, ldc, first, mv, nv);
      break;
    case KernelChoice::Avx512: return micro_kernel_avx512(kc, a, b, c, ldc, first, mv, nv);
    case KernelChoice::Avx2: return micro_kernel_avx2(kc, a, b, c, ldc, first, mv, nv);
    case KernelChoice::Portable: break;
  }
#endif
  micro_kernel_portable(kc, a, b, c, ldc, first, mv, nv);
}

void pack_a(const float* a, int64_t m, int64_t k, int64_t rs, int64_t cs, float* dst) {
  for (int64_t ib = 0; ib < (m + MR - 1) / MR; ++ib) {
    float* panel = dst + ib * k * MR;
    for (int64_t kk = 0; kk < k; ++kk)
      for (int r = 0; r < MR; ++r) {
        const int64_t i = ib * MR + r;
        panel[kk * MR + r] = i < m ? a[i * rs + kk * cs] : 0.0f;
      }
  }
}

void pack_b(const float* b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int64_t rs, int64_t cs, float* dst) {
  for (int64_t jb = 0; jb < (nc + NR - 1) / NR; ++jb) {
    float* panel = dst + jb * kc * NR;
    const int64_t jn = std::min<int64_t>(NR, nc - jb * NR);
    for (int64_t kk = 0; kk < kc; ++kk) {
      const float* row = b + (k0 + kk) * rs + (n0 + jb * NR) * cs;
      float* out = panel + kk * NR;
      if (cs == 1) {
        std::memcpy(out, row, jn * sizeof(float));
      } else {
        for (int64_t j = 0; j < jn; ++j) out[j] = row[j * cs];
      }
      for (int64_t j = jn; j < NR; ++j) out[j] = 0.0f;
    }
  }
}

void gemm_packed(int64_t m, int64_t n, int64_t k, const float* packed_a, const float* packed_b, float* c,
                 int64_t ldc, bool accumulate) {
  const int64_t n_panels = (n + NR - 1) / NR;
  for (int64_t ib = 0; ib * MR < m; ++ib) {
    const int mv = static_cast<int>(std::min<int64_t>(MR, m - ib * MR));
    const float* a = packed_a + ib * k * MR;
    for (int64_t jb = 0; jb < n_panels; ++jb) {
      const int nv = static_cast<int>(std::min<int64_t>(NR, n - jb * NR));
      micro_kernel(k, a, packed_b + jb * k * NR, c + ib * MR * ldc + jb * NR, ldc, !accumulate, mv, nv);
    }
  }
}

}  // namespace tf::cpu::gemm
