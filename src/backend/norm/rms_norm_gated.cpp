#include "backend/norm/rms_norm_gated.h"

#include "backend/device/dispatch.h"

namespace tf {

void rms_norm_gated(const Tensor& x, const Tensor& z, const Tensor& w, float eps, Tensor& y) {
  const char* op = "rms_norm_gated";
  Device dev = common_device(op, {&x, &z, &w, &y});
  expect_dtypes(op, DType::BF16, {{"x", x}, {"z", z}, {"y", y}});
  expect_bf16_or_f32(op, "w", w);
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected [rows, d]");
  expect_shape(op, "z", z, x.shape);
  expect_shape(op, "w", w, {x.dim(1)});
  expect_shape(op, "y", y, x.shape);
  run_kernel(op, dev, cpu::rms_norm_gated, TF_CUDA_KERNEL(cuda::rms_norm_gated), x, z, w, eps, y);
}

}  // namespace tf
