#pragma once
// The CPU's fp32 GEMM building blocks, shared by convolution, attention and later linear layers.
// A tile of C (MR rows x NR columns) is computed by a micro-kernel from packed panels of A and B;
// every element of C is one sequential sum over k of fused multiply-adds, so the result does not
// depend on blocking, threading or the instruction set (AVX-512, AVX2 or portable std::fma).
#include <cstdint>

namespace tf::cpu::gemm {

constexpr int MR = 12;  // rows of C per micro-tile
constexpr int NR = 32;  // columns of C per micro-tile

// Panels of A: for row block ib, element (r, k) lives at a[ib * k_total * MR + k * MR + r];
// rows past m are zero. `at(i, k)` reads A's element.
int64_t packed_a_size(int64_t m, int64_t k_total);

// Panels of B for a tile of kc rows and nc columns: element (kk, j) lives at
// b[(j / NR) * kc * NR + kk * NR + j % NR]; columns past nc are zero.
int64_t packed_b_size(int64_t kc, int64_t nc);

// C[0:mv, 0:nv] (row stride ldc) = (first ? 0 : C) + sum over kc of a-panel x b-panel.
// a: one A panel positioned at its first k (stride MR per k); b: one B panel (stride NR per k).
void micro_kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool first, int mv, int nv);

// Packs A[m, k] given by strides (element (i, kk) at a[i * rs + kk * cs]) into panels.
void pack_a(const float* a, int64_t m, int64_t k, int64_t rs, int64_t cs, float* dst);

// Packs B rows [k0, k0 + kc) and columns [n0, n0 + nc) (element (kk, j) at b[kk * rs + j * cs]).
void pack_b(const float* b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int64_t rs, int64_t cs, float* dst);

// C[m, n] (row stride ldc) = (accumulate ? C : 0) + A B, from packed A (m x k) and a B packed for
// the whole of k and n (k rows, n columns); single-threaded, callers split the work.
void gemm_packed(int64_t m, int64_t n, int64_t k, const float* packed_a, const float* packed_b, float* c,
                 int64_t ldc, bool accumulate);

// Which micro-kernel runs (tests compare them byte for byte): the best this CPU has, or one
// named; false (and no change) when this CPU lacks it.
enum class KernelChoice { Best, Avx512, Avx2, Portable };
bool set_kernel(KernelChoice k);

// Blocking of k for the B panels kept in cache.
constexpr int64_t KC = 384;

}  // namespace tf::cpu::gemm
