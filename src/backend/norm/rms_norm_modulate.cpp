#include "backend/norm/rms_norm_modulate.h"

#include "backend/device/dispatch.h"

namespace tf {

void rms_norm_modulate(const Tensor& x, const Tensor& w, float eps, const Tensor& shift, const Tensor& scale, Tensor& y) {
  const char* op = "rms_norm_modulate";
  Device dev = common_device(op, {&x, &w, &shift, &scale, &y});
  expect_dtypes(op, DType::BF16, {{"x", x}, {"w", w}, {"shift", shift}, {"scale", scale}, {"y", y}});
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected [rows, d]");
  expect_shapes(op, {x.dim(1)}, {{"w", w}, {"shift", shift}, {"scale", scale}});
  expect_shape(op, "y", y, x.shape);
  run_kernel(op, dev, cpu::rms_norm_modulate, TF_CUDA_KERNEL(cuda::rms_norm_modulate), x, w, eps, shift, scale, y);
}

}  // namespace tf
