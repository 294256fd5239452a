#pragma once
// fp32-class products on the tensor cores (3xTF32): each operand x = hi + lo with hi = tf32(x) and
// lo = tf32(x - hi), and a b as lo_a hi_b + hi_a lo_b + hi_a hi_b on mma.sync m16n8k8 with fp32
// accumulation, small terms first. Fragments are read from fp32 tiles in shared memory, split as
// they are read, or from tiles stored already split (two planes, hi and lo) when many warps read them.
#include <cstdint>

namespace tf::cuda::tf32x3 {

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// 16 x 8 A operand: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); g = lane / 4, t = lane % 4.
struct FragA {
  uint32_t hi[4], lo[4];
};
// 8 x 8 B operand: b0 (k = t, n = g), b1 (k = t + 4, n = g).
struct FragB {
  uint32_t hi[2], lo[2];
};

template <int N>
__device__ __forceinline__ void split(const float (&x)[N], uint32_t (&hi)[N], uint32_t (&lo)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    hi[i] = to_tf32(x[i]);
    lo[i] = to_tf32(__fsub_rn(x[i], __uint_as_float(hi[i])));
  }
}

// x as its (hi, lo) pair, for tiles stored split.
__device__ __forceinline__ uint2 split(float x) {
  const uint32_t hi = to_tf32(x);
  return make_uint2(hi, to_tf32(__fsub_rn(x, __uint_as_float(hi))));
}

// Lane (g, t) of a warp: the fragment coordinates.
struct Lane {
  int g, t;
  __device__ explicit Lane(int lane) : g(lane / 4), t(lane % 4) {}
};

// A[m][k] from a row-major tile (pitch `ld`), the fragment at (m0, k0).
__device__ __forceinline__ FragA load_a(const float* A, int ld, int m0, int k0, Lane l) {
  const float* p = A + (m0 + l.g) * ld + k0 + l.t;
  const float x[4] = {p[0], p[8 * ld], p[4], p[8 * ld + 4]};
  FragA f;
  split(x, f.hi, f.lo);
  return f;
}
// A[m][k] = X[k][m] from a row-major tile X (pitch `ld`): the transposed operand, no copy.
__device__ __forceinline__ FragA load_a_transposed(const float* X, int ld, int m0, int k0, Lane l) {
  const float* p = X + (k0 + l.t) * ld + m0 + l.g;
  const float x[4] = {p[0], p[8], p[4 * ld], p[4 * ld + 8]};
  FragA f;
  split(x, f.hi, f.lo);
  return f;
}
// B[k][n] from a row-major tile (pitch `ld`), the fragment at (k0, n0).
__device__ __forceinline__ FragB load_b(const float* B, int ld, int k0, int n0, Lane l) {
  const float* p = B + (k0 + l.t) * ld + n0 + l.g;
  const float x[2] = {p[0], p[4 * ld]};
  FragB f;
  split(x, f.hi, f.lo);
  return f;
}

// B[k][n] = X[n][k] from a row-major tile X (pitch `ld`): the transposed operand, no copy.
__device__ __forceinline__ FragB load_b_transposed(const float* X, int ld, int k0, int n0, Lane l) {
  const float* p = X + (n0 + l.g) * ld + k0 + l.t;
  const float x[2] = {p[0], p[4]};
  FragB f;
  split(x, f.hi, f.lo);
  return f;
}
// The same from a tile stored split: planes hi and lo, pitch `ld`.
__device__ __forceinline__ FragB load_b(const uint32_t* hi, const uint32_t* lo, int ld, int k0, int n0, Lane l) {
  const int at = (k0 + l.t) * ld + n0 + l.g;
  FragB f;
  f.hi[0] = hi[at];
  f.hi[1] = hi[at + 4 * ld];
  f.lo[0] = lo[at];
  f.lo[1] = lo[at + 4 * ld];
  return f;
}

__device__ __forceinline__ void mma_tf32(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// c[16 x 8] += a[16 x 8] b[8 x 8]; c0 (g, 2t), c1 (g, 2t + 1), c2 (g + 8, 2t), c3 (g + 8, 2t + 1).
__device__ __forceinline__ void mma(float (&c)[4], const FragA& a, const FragB& b) {
  mma_tf32(c, a.lo, b.hi);
  mma_tf32(c, a.hi, b.lo);
  mma_tf32(c, a.hi, b.hi);
}

}  // namespace tf::cuda::tf32x3
