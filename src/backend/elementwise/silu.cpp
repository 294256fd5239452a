#include "backend/elementwise/silu.h"

#include "backend/device/dispatch.h"

namespace tf {

void silu(const Tensor& x, Tensor& y) {
  const char* op = "silu";
  Device dev = common_device(op, {&x, &y});
  expect_elementwise(op, DType::BF16, {{"x", x}, {"y", y}});
  run_kernel(op, dev, cpu::silu, TF_CUDA_KERNEL(cuda::silu), x, y);
}

}  // namespace tf
