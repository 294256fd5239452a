// linear on CUDA: the streaming kernel up to 128 rows, cuBLASLt above (backend/cuda/gemm.h).
#include <vector>

#include "backend/cuda/gemm.h"
#include "backend/cuda/transformer_ops.h"

namespace tf::cuda {

// Packing prompts relies on the streaming kernel's row range (backend/linear.h).
static_assert(kStreamingRows == kLinearPackedRows, "the packed-rows limit must be the streaming kernel's");

void linear(const Tensor& x, const Tensor& w, Tensor& y) {
  gemm_bf16_xwt(x.data, w.data, y.data, x.dim(0), w.dim(0), x.dim(1));
}

void linear_shared_input(const Tensor& x, std::span<const LinearPart> parts) {
  std::vector<StreamingWeight> ws;
  for (const LinearPart& p : parts) ws.push_back({p.w->data, p.y->data, p.w->dim(0)});
  for (size_t i = 0; i < ws.size(); i += kMaxStreamingWeights)
    gemm_bf16_xwt_group(x.data, x.dim(0), x.dim(1),
                        std::span(ws).subspan(i, std::min<size_t>(kMaxStreamingWeights, ws.size() - i)));
}

}  // namespace tf::cuda
