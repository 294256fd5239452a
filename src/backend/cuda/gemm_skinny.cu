// Skinny products on the tensor cores (few tokens, large weights): y[m, n] = bf16(sum_k x[m, k] w[n, k]),
// bf16 in, fp32 accumulation (mma.sync m16n8k16). Bound by streaming w once, so every block streams
// its own 8 * NT weight rows with 16-byte loads (both operands read with the same k permutation
// inside each 32-wide k block, which leaves every product and sum intact), the 4 warps of a block
// take quarters of k, and the quarters are added in a fixed order: the same bits every run.
#include "backend/cuda/check.h"
#include "backend/cuda/device_math.cuh"
#include "backend/cuda/gemm.h"

namespace tf::cuda {

namespace {

constexpr int kWarps = 4;

__device__ __forceinline__ void mma16816(float* c, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// MT: 16-token tiles (m <= 16 MT, MT <= 6: more spills registers); NT: 8-row weight tiles per block.
template <int MT, int NT>
__global__ void __launch_bounds__(32 * kWarps) gemm_skinny_kernel(const uint16_t* x, const uint16_t* w, uint16_t* y,
                                                                  int m, int n, int k) {
  extern __shared__ float part[];  // [16 MT][8 NT] running sum of the warps' quarters
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
  const int n0 = blockIdx.x * 8 * NT;
  const int kq = k / kWarps, kbeg = warp * kq;
  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  const uint4 zero = make_uint4(0, 0, 0, 0);
#pragma unroll 2
  for (int kb = kbeg; kb < kbeg + kq; kb += 32) {
    uint4 wv[NT], xv[MT][2];
#pragma unroll
    for (int j = 0; j < NT; ++j)
      wv[j] = *reinterpret_cast<const uint4*>(w + int64_t(n0 + 8 * j + g) * k + kb + 8 * q);
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = 16 * i + 8 * h + g;
        xv[i][h] = row < m ? *reinterpret_cast<const uint4*>(x + int64_t(row) * k + kb + 8 * q) : zero;
      }
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        mma16816(acc[i][j], xv[i][0].x, xv[i][1].x, xv[i][0].y, xv[i][1].y, wv[j].x, wv[j].y);
        mma16816(acc[i][j], xv[i][0].z, xv[i][1].z, xv[i][0].w, xv[i][1].w, wv[j].z, wv[j].w);
      }
  }
  // quarters in order: part = w0; part += w1; part += w2; y = bf16(part + w3)
  constexpr int cols = 8 * NT;
  for (int step = 0; step < kWarps; ++step) {
    if (warp == step) {
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = 16 * i + g + 8 * (e >> 1), c = 8 * j + 2 * q + (e & 1);
            float v = acc[i][j][e];
            if (step > 0) v = part[r * cols + c] + v;
            if (step < kWarps - 1) part[r * cols + c] = v;
            else if (r < m) y[int64_t(r) * n + n0 + c] = st_bf16(v);
          }
    }
    __syncthreads();
  }
}

template <int MT>
void launch_mt(const uint16_t* x, const uint16_t* w, uint16_t* y, int m, int n, int k) {
  const int nt = (n / 32 >= 128) ? 4 : (n / 16 >= 128) ? 2 : 1;
  auto go = [&](auto kernel, int NT) {
    const size_t smem = sizeof(float) * 16 * MT * 8 * NT;
    kernel<<<static_cast<unsigned>(n / (8 * NT)), 32 * kWarps, smem, stream()>>>(x, w, y, m, n, k);
  };
  if (nt == 4) go(gemm_skinny_kernel<MT, 4>, 4);
  else if (nt == 2) go(gemm_skinny_kernel<MT, 2>, 2);
  else go(gemm_skinny_kernel<MT, 1>, 1);
  TF_CUDA_LAUNCH("gemm_skinny_kernel");
}

}  // namespace

bool gemm_skinny_fits(int64_t m, int64_t n, int64_t k, const void* x, const void* w, const void* y) {
  auto aligned16 = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; };
  return m >= 1 && m <= 96 && n > 64 && n % 32 == 0 && k % (32 * kWarps) == 0 && k <= (int64_t(1) << 20) &&
         n <= (int64_t(1) << 24) && aligned16(x) && aligned16(w) && (reinterpret_cast<uintptr_t>(y) & 3) == 0;
}

void gemm_skinny(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k) {
  auto xp = static_cast<const uint16_t*>(x);
  auto wp = static_cast<const uint16_t*>(w);
  auto yp = static_cast<uint16_t*>(y);
  const int mt = static_cast<int>((m + 15) / 16);
  switch (mt) {
    case 1: return launch_mt<1>(xp, wp, yp, int(m), int(n), int(k));
    case 2: return launch_mt<2>(xp, wp, yp, int(m), int(n), int(k));
    case 3: return launch_mt<3>(xp, wp, yp, int(m), int(n), int(k));
    case 4: return launch_mt<4>(xp, wp, yp, int(m), int(n), int(k));
    case 5: return launch_mt<5>(xp, wp, yp, int(m), int(n), int(k));
    default: return launch_mt<6>(xp, wp, yp, int(m), int(n), int(k));
  }
}

}  // namespace tf::cuda
