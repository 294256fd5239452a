#include "backend/elementwise/transpose_to_bf16.h"

#include "backend/device/dispatch.h"

namespace tf {

void transpose_to_bf16(const Tensor& x, Tensor& y) {
  const char* op = "transpose_to_bf16";
  const Device dev = common_device(op, {&x, &y});
  expect_dtype(op, "x", x, DType::F32);
  expect_dtype(op, "y", y, DType::BF16);
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected F32 [R, K]");
  expect_shape(op, "y", y, {x.dim(1), x.dim(0)});
  run_kernel(op, dev, cpu::transpose_to_bf16, TF_CUDA_KERNEL(cuda::transpose_to_bf16), x, y);
}

}  // namespace tf
