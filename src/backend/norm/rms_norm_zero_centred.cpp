#include "backend/norm/rms_norm_zero_centred.h"

#include "backend/cpu/transformer_ops.h"
#include "backend/device/dispatch.h"
#include "backend/elementwise/residual_add.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/kernels/transformer_ops.h"
#endif

namespace tf {

namespace {
void check_norm_weight(const char* op, const Tensor& x, const Tensor& w) {
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected [rows, d]");
  expect_bf16_or_f32(op, "w", w);
  expect_shape(op, "w", w, {x.dim(1)});
}
}  // namespace

void rms_norm_zero_centred(const Tensor& x, const Tensor& w, float eps, Tensor& y) {
  const char* op = "rms_norm_zero_centred";
  Device dev = common_device(op, {&x, &w, &y});
  expect_dtypes(op, DType::BF16, {{"x", x}, {"y", y}});
  check_norm_weight(op, x, w);
  expect_shape(op, "y", y, x.shape);
  run_kernel(op, dev, cpu::rms_norm_zero_centred, TF_CUDA_KERNEL(cuda::rms_norm_zero_centred), x, w, eps, y);
}

void residual_add_rms_norm_zero_centred(Tensor& h, const Tensor& d, const Tensor& w, float eps, Tensor& y) {
  const char* op = "residual_add_rms_norm_zero_centred";
  Device dev = common_device(op, {&h, &d, &w, &y});
  check_residual_delta(op, h, d);
  expect_dtype(op, "y", y, DType::BF16);
  check_norm_weight(op, h, w);
  expect_shape(op, "y", y, h.shape);
  if (y.data == h.data || y.data == d.data) fail(std::string(op) + ": y must not alias h or d");
  run_kernel(op, dev, cpu::residual_add_rms_norm_zero_centred, TF_CUDA_KERNEL(cuda::residual_add_rms_norm_zero_centred),
             h, d, w, eps, y);
}

}  // namespace tf
