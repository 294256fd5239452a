// Probe of the halo tiles' premise: a wgmma descriptor that starts s rows into a swizzled TMA box
// (not at the swizzle pattern's 1024- or 512-byte boundary) reads rows s .. s + 63 of the box.
// For each swizzle (128-byte rows of 64 bf16, 64-byte rows of 32), each shift s and each base-offset
// field (0, or the start's (address >> 7) & 7), D = A_s . I^T is compared with the box's rows.
// Build: nvcc -std=c++20 -O2 -gencode=arch=compute_90a,code=sm_90a -Isrc bench/cuda/wgmma_row_shift_probe.cu \
//   src/backend/cuda/runtime/tensor_map.cpp -o wgmma_row_shift_probe
#include <cuda_bf16.h>

#include <cstdio>
#include <vector>

#include "backend/cuda/primitives/tma.cuh"
#include "backend/cuda/primitives/wgmma.cuh"
#include "backend/cuda/runtime/tensor_map.h"

using namespace tf::cuda;

namespace {

constexpr int kRows = 80;  // the box: kRows positions of K channels

template <int K>  // K = 64: 128-byte swizzle; K = 32: 64-byte
__global__ void probe(const __grid_constant__ CUtensorMap map, int shift, int base_mode, float* out) {
  constexpr int kRowBytes = 2 * K;
  extern __shared__ unsigned char smem_raw[];
  auto* base = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  unsigned char* box = base;
  unsigned char* ident = base + 16384;  // the identity B [K rows (n) x K], same swizzle
  auto* bar = reinterpret_cast<uint64_t*>(base + 16384 + 8192);
  const int t = threadIdx.x;
  for (int i = t; i < K * K; i += blockDim.x) {
    const int n = i / K, k = i % K;
    const int phase = K == 64 ? n % 8 : (n >> 1) % 4;
    const int at = n * kRowBytes + (((k / 8) ^ phase) * 16) + (k % 8) * 2;
    *reinterpret_cast<__nv_bfloat16*>(ident + at) = __float2bfloat16(n == k ? 1.f : 0.f);
  }
  if (t == 0) {
    mbarrier_init(bar, 1);
    mbarrier_init_fence();
  }
  fence_shared_for_async_proxy();
  __syncthreads();
  if (t == 0) {
    mbarrier_arrive_expect_tx(bar, kRows * kRowBytes);
    tma_load_3d(box, &map, bar, 0, 0, 0);
  }
  mbarrier_wait(bar, 0);
  const unsigned char* a_at = box + shift * kRowBytes;
  uint64_t a = K == 64 ? wgmma_descriptor(a_at) : wgmma_descriptor_64b(a_at);
  if (base_mode) a |= uint64_t((shared_address(a_at) >> 7) & 7) << 49;
  const uint64_t b = K == 64 ? wgmma_descriptor(ident) : wgmma_descriptor_64b(ident);
  float d[K / 2];
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk)
    wgmma_m64k16_bf16<K>(d, wgmma_descriptor_at_k16(a, kk), wgmma_descriptor_at_k16(b, kk), kk != 0);
  wgmma_commit();
  wgmma_wait_all();
  wgmma_fence_registers(d);
#pragma unroll
  for (int i = 0; i < K / 2; ++i) {
    const int r = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i % 4) / 2), c = 8 * (i / 4) + 2 * (t % 4) + i % 2;
    out[r * K + c] = d[i];
  }
}

template <int K>
int run(const __nv_bfloat16* g, const std::vector<float>& host) {
  const uint64_t dims[3] = {uint64_t(K), uint64_t(kRows), 1}, strides[2] = {uint64_t(K) * 2, uint64_t(K) * 2 * kRows};
  const uint32_t box[3] = {uint32_t(K), uint32_t(kRows), 1}, ones[3] = {1, 1, 1};
  const CUtensorMap map = bf16_tensor_map("probe", g, 3, dims, strides, box, ones, K == 32);
  float* out = nullptr;
  cudaMalloc(&out, 64 * K * sizeof(float));
  cudaFuncSetAttribute(probe<K>, cudaFuncAttributeMaxDynamicSharedMemorySize, 32768);
  int bad_modes = 0;
  for (int mode = 0; mode < 2; ++mode) {
    int failures = 0;
    for (int shift = 0; shift <= kRows - 64; ++shift) {
      probe<K><<<1, 128, 32768>>>(map, shift, mode, out);
      std::vector<float> d(64 * K);
      if (cudaMemcpy(d.data(), out, d.size() * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
        std::printf("K %d: CUDA error %s\n", K, cudaGetErrorString(cudaGetLastError()));
        return 2;
      }
      int wrong = 0;
      for (int r = 0; r < 64; ++r)
        for (int c = 0; c < K; ++c) wrong += d[r * K + c] != host[(shift + r) * K + c];
      failures += wrong != 0;
      std::printf("swizzle %3d B, base offset %s, shift %2d: %s (%d of %d wrong)\n", 2 * K,
                  mode ? "(addr>>7)&7" : "0         ", shift, wrong ? "WRONG" : "ok", wrong, 64 * K);
    }
    bad_modes += failures != 0;
  }
  cudaFree(out);
  return bad_modes;
}

}  // namespace

int main() {
  std::vector<float> h64(kRows * 64), h32(kRows * 32);
  std::vector<__nv_bfloat16> b64(h64.size()), b32(h32.size());
  for (size_t i = 0; i < h64.size(); ++i) h64[i] = float(int((i * 37) % 251) - 125), b64[i] = __float2bfloat16(h64[i]);
  for (size_t i = 0; i < h32.size(); ++i) h32[i] = float(int((i * 53) % 241) - 120), b32[i] = __float2bfloat16(h32[i]);
  __nv_bfloat16 *g64 = nullptr, *g32 = nullptr;
  cudaMalloc(&g64, b64.size() * 2);
  cudaMalloc(&g32, b32.size() * 2);
  cudaMemcpy(g64, b64.data(), b64.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(g32, b32.data(), b32.size() * 2, cudaMemcpyHostToDevice);
  const int bad128 = run<64>(g64, h64), bad64 = run<32>(g32, h32);
  std::printf("base-offset modes with a wrong shift: 128-byte swizzle %d of 2, 64-byte %d of 2\n", bad128, bad64);
  return 0;
}
