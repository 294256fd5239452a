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

void residual_add_rms_norm_modulate(Tensor& h, const Tensor& d, const Tensor& gate, const Tensor& w, float eps,
                                    const Tensor& shift, const Tensor& scale, Tensor& y) {
  const char* op = "residual_add_rms_norm_modulate";
  Device dev = common_device(op, {&h, &d, &gate, &w, &shift, &scale, &y});
  expect_dtypes(op, DType::BF16, {{"h", h}, {"d", d}, {"gate", gate}, {"w", w}, {"shift", shift}, {"scale", scale}, {"y", y}});
  if (h.rank() != 2) fail(std::string(op) + ": h is " + h.describe() + ", expected [rows, d]");
  expect_shape(op, "d", d, h.shape);
  expect_shapes(op, {h.dim(1)}, {{"gate", gate}, {"w", w}, {"shift", shift}, {"scale", scale}});
  expect_shape(op, "y", y, h.shape);
  if (y.data == h.data || y.data == d.data) fail(std::string(op) + ": y must not alias h or d");
  run_kernel(op, dev, cpu::residual_add_rms_norm_modulate, TF_CUDA_KERNEL(cuda::residual_add_rms_norm_modulate), h, d,
             gate, w, eps, shift, scale, y);
}

}  // namespace tf
