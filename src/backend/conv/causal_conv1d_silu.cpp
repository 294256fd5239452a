#include "backend/conv/causal_conv1d_silu.h"

#include "backend/device/dispatch.h"

namespace tf {

void causal_conv1d_silu(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets, Tensor& y) {
  const char* op = "causal_conv1d_silu";
  Device dev = common_device(op, {&x, &w, &y});
  expect_dtypes(op, DType::BF16, {{"x", x}, {"w", w}, {"y", y}});
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected [tokens, channels]");
  if (w.rank() != 3 || w.dim(0) != x.dim(1) || w.dim(1) != 1 || w.dim(2) < 1)
    fail(std::string(op) + ": w is " + w.describe() + ", expected [" + std::to_string(x.dim(1)) + ", 1, K]");
  expect_shape(op, "y", y, x.shape);
  if (y.data == x.data && y.nbytes() > 0) fail(std::string(op) + ": y must not alias x");
  check_seq_offsets(op, seq_offsets, x.dim(0));
  run_kernel(op, dev, cpu::causal_conv1d_silu, TF_CUDA_KERNEL(cuda::causal_conv1d_silu), x, w, seq_offsets, y);
}

}  // namespace tf
