#pragma once
// Our own Hopper product for more than kStreamingRows rows, with the op after it in its epilogue
// (gemm_wgmma.cuh): s = x w^T in fp32, then per element as the separate ops round:
//   store:          y = bf16(s)
//   gated_residual: h = bf16(float(h) + float(bf16(s)) * float(gate[n]))  (residual_add, gated)
//   situ:           y = situ_gated_product(bf16(s_up), bf16(s_gate)), s_up from w, s_gate from w2
// So a fused call has the bytes of the store form followed by the element-wise op.
#include <cstdint>

namespace tf::cuda {

enum class GemmEpilogue { store, gated_residual, situ };

struct GemmWgmma {
  const void* x;      // [m, k]
  const void* w;      // [n, k] (situ: the up weight)
  const void* w2;     // situ: the gate weight [n, k]
  void* y;            // [m, n]; gated_residual: h, updated in place
  const void* gate;   // gated_residual: [n]
  int64_t m, n, k;
};

// Whether the kernel takes these operands: a Hopper GPU, k and n multiples of 8, x, w (and w2) 16-byte
// aligned, y and gate 4-byte aligned, sizes below 2^31.
bool gemm_wgmma_fits(const GemmWgmma& g);
// Launches one epilogue's kernel on the runtime's stream (situ: false, nothing launched, while SiTU's
// tables cannot be made yet: during a capture before their first use).
bool gemm_wgmma(GemmEpilogue e, const GemmWgmma& g);

}  // namespace tf::cuda
