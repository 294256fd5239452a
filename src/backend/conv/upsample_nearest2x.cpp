#include "backend/conv/upsample_nearest2x.h"

#include "backend/device/dispatch.h"

namespace tf {

void upsample_nearest2x(const Tensor& x, Tensor& y) {
  const char* op = "upsample_nearest2x";
  expect_dtype(op, "x", x, DType::F32);
  expect_dtype(op, "y", y, DType::F32);
  require(x.rank() == 3, std::string(op) + ": x is " + x.describe() + ", expected [C, H, W]");
  expect_shape(op, "y", y, {x.dim(0), 2 * x.dim(1), 2 * x.dim(2)});
  const Device d = common_device(op, {&x, &y});
  run_kernel(op, d, cpu::upsample_nearest2x, TF_CUDA_KERNEL(cuda::upsample_nearest2x), x, y);
}

}  // namespace tf
