// linear on CUDA: one cuBLASLt bf16 product with fp32 accumulation (backend/cuda/gemm.h).
#include "backend/cuda/gemm.h"
#include "backend/cuda/transformer_ops.h"

namespace tf::cuda {

void linear(const Tensor& x, const Tensor& w, Tensor& y) {
  gemm_bf16_xwt(x.data, w.data, y.data, x.dim(0), w.dim(0), x.dim(1));
}

}  // namespace tf::cuda
