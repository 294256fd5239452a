// linear on CUDA: the streaming kernel up to 128 rows, cuBLASLt above (backend/cuda/kernels/linear/gemm.h).
#include <vector>

#include "backend/cuda/kernels/linear/gemm.h"
#include "backend/cuda/kernels/linear/gemm_wgmma.h"
#include "backend/elementwise/residual_add.h"
#include "backend/elementwise/silu_gated_product.h"
#include "backend/elementwise/situ_gated_product.h"
#include "backend/linear/linear.h"
#include "backend/linear/linear_gated_product.h"
#include "backend/variants.h"

namespace tf::cuda {

// Packing prompts relies on the streaming kernel's row range (backend/linear/linear.h).
static_assert(kStreamingRows == kLinearPackedRows, "the packed-rows limit must be the streaming kernel's");

void linear(const Tensor& x, const Tensor& w, Tensor& y) {
  if (y.dtype == DType::F32) return gemm_streaming_shares(x.data, x.dim(0), x.dim(1), w.data, w.dim(0), y.ptr<float>());
  gemm_bf16_xwt(x.data, w.data, y.data, x.dim(0), w.dim(0), x.dim(1));
}

void linear_bias(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) {
  gemm_cublaslt_bias(x.data, w.data, b.data, b.dtype == DType::F32 ? GemmBias::f32 : GemmBias::bf16, y.data, x.dim(0),
                     w.dim(0), x.dim(1));
}

// The streaming kernel's shares, where it runs (not under TF_GEMM=cublaslt) and where they are
// more than one; TF_LINEAR_SHARES=off offers none (to compare).
int64_t linear_k_shares(int64_t rows, int64_t k, int64_t n) {
  if (variant_is<Variant::linear_shares>("off") || gemm_cublaslt_forced()) return 0;
  if (rows < 1 || rows > kStreamingRows) return 0;
  return streaming_share_count(k, n);
}

void linear_shared_input(const Tensor& x, std::span<const LinearPart> parts) {
  std::vector<StreamingWeight> ws;
  for (const LinearPart& p : parts) ws.push_back({p.w->data, p.y->data, p.w->dim(0)});
  for (size_t i = 0; i < ws.size(); i += kMaxStreamingWeights)
    gemm_bf16_xwt_group(x.data, x.dim(0), x.dim(1),
                        std::span(ws).subspan(i, std::min<size_t>(kMaxStreamingWeights, ws.size() - i)));
}

namespace {

// Above the streaming rows under TF_LINEAR_EPILOGUE=fused: the wgmma kernel with the step in its
// epilogue, wherever its geometry fits (a choice of n, k and alignment, never of m beyond 128).
bool fused_epilogue(const GemmWgmma& g) {
  return g.m > kStreamingRows && variant_is<Variant::linear_epilogue>("fused") && gemm_wgmma_fits(g);
}

}  // namespace

// silu: one streaming launch where that kernel applies (its geometry, no k shares, not TF_GEMM=cublaslt,
// not TF_GATED_IN_PRODUCT=off); situ: the wgmma kernel's epilogue (fused_epilogue); else the two
// products and the elementwise kernel: the same bytes.
void linear_gated_product(const Tensor& x, const Tensor& w_gate, const Tensor& w_up, GatedActivation act, Tensor& y) {
  const int64_t n = x.dim(0), K = x.dim(1), N = w_gate.dim(0);
  if (n == 0 || N == 0) return;
  if (act == GatedActivation::silu && variant_is<Variant::gated_in_product>("on") && !gemm_cublaslt_forced() &&
      gemm_streaming_silu_gated(x.data, n, K, w_gate.data, w_up.data, N, y.data))
    return;
  const GemmWgmma g{.x = x.data, .w = w_up.data, .w2 = w_gate.data, .y = y.data, .gate = nullptr, .m = n, .n = N, .k = K};
  if (act == GatedActivation::situ && fused_epilogue(g) && gemm_wgmma(GemmEpilogue::situ, g)) return;
  Tensor gate = empty(DType::BF16, y.shape, Device::CUDA), up = empty(DType::BF16, y.shape, Device::CUDA);
  const LinearPart parts[2] = {{&w_gate, &gate}, {&w_up, &up}};
  cuda::linear_shared_input(x, parts);
  if (act == GatedActivation::silu) cuda::silu_gated_product(gate, up, y);
  else cuda::situ_gated_product(up, gate, y);
}

void linear_gated_residual(const Tensor& x, const Tensor& w, const Tensor& gate, Tensor& h) {
  const GemmWgmma g{.x = x.data, .w = w.data, .w2 = nullptr, .y = h.data, .gate = gate.data, .m = x.dim(0),
                    .n = w.dim(0), .k = x.dim(1)};
  if (g.m == 0 || g.n == 0) return;
  if (fused_epilogue(g) && gemm_wgmma(GemmEpilogue::gated_residual, g)) return;
  Tensor y = empty(DType::BF16, h.shape, Device::CUDA);
  cuda::linear(x, w, y);
  cuda::residual_add_gated(h, y, gate);
}

}  // namespace tf::cuda
