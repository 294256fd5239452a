#include "backend/elementwise/modulate.h"

#include "backend/device/dispatch.h"

namespace tf {

void modulate(const Tensor& x, const Tensor& shift, const Tensor& scale, Tensor& y) {
  const char* op = "modulate";
  Device dev = common_device(op, {&x, &shift, &scale, &y});
  expect_dtypes(op, DType::BF16, {{"x", x}, {"shift", shift}, {"scale", scale}, {"y", y}});
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected [rows, d]");
  expect_shape(op, "shift", shift, {x.dim(1)});
  expect_shape(op, "scale", scale, {x.dim(1)});
  expect_shape(op, "y", y, x.shape);
  run_kernel(op, dev, cpu::modulate, TF_CUDA_KERNEL(cuda::modulate), x, shift, scale, y);
}

}  // namespace tf
