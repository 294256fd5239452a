#include "backend/norm/rms_norm.h"

#include "backend/device/dispatch.h"
#include "backend/elementwise/residual_add.h"

namespace tf {

namespace {
void check_norm_weight(const char* op, const Tensor& x, const Tensor& w, NormWeight form) {
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected [rows, d]");
  if (form == NormWeight::plain) expect_dtype(op, "w (plain)", w, DType::BF16);
  else expect_bf16_or_f32(op, "w", w);
  expect_shape(op, "w", w, {x.dim(1)});
}
}  // namespace

void rms_norm(const Tensor& x, const Tensor& w, const RmsNormOptions& o, Tensor& y) {
  const char* op = "rms_norm";
  Device dev = common_device(op, {&x, &w, &y});
  expect_dtypes(op, DType::BF16, {{"x", x}, {"y", y}});
  check_norm_weight(op, x, w, o.weight);
  expect_shape(op, "y", y, x.shape);
  if (o.weight == NormWeight::plain)
    return run_kernel("rms_norm (weight plain)", dev, cpu::rms_norm_plain, TF_CUDA_KERNEL(cuda::rms_norm_plain), x, w, o.eps, y);
  run_kernel(op, dev, cpu::rms_norm_one_plus, TF_CUDA_KERNEL(cuda::rms_norm_one_plus), x, w, o.eps, y);
}

void residual_add_rms_norm(Tensor& h, const Tensor& d, const Tensor& w, const RmsNormOptions& o, Tensor& y) {
  const char* op = "residual_add_rms_norm";
  Device dev = common_device(op, {&h, &d, &w, &y});
  check_residual_delta(op, h, d);
  expect_dtype(op, "y", y, DType::BF16);
  check_norm_weight(op, h, w, o.weight);
  expect_shape(op, "y", y, h.shape);
  if (y.data == h.data || y.data == d.data) fail(std::string(op) + ": y must not alias h or d");
  if (o.weight == NormWeight::plain) {  // no fused kernel: the two steps, the same bytes by definition
    residual_add(h, d);
    return rms_norm(h, w, o, y);
  }
  run_kernel(op, dev, cpu::residual_add_rms_norm_one_plus, TF_CUDA_KERNEL(cuda::residual_add_rms_norm_one_plus), h, d,
             w, o.eps, y);
}

}  // namespace tf
