#include "backend/linear/linear.h"

#include "backend/device/dispatch.h"
#include "backend/elementwise/residual_add.h"
#include "backend/norm/rms_norm_modulate.h"

namespace tf {

namespace {

void check_operands(const char* op, const Tensor& x, const Tensor& w) {
  expect_dtypes(op, DType::BF16, {{"x", x}, {"w", w}});
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected [n, K]");
  if (w.rank() != 2 || w.dim(1) != x.dim(1))
    fail(std::string(op) + ": w is " + w.describe() + ", expected [N, " + std::to_string(x.dim(1)) + "] for x " +
         x.describe());
}

void check_linear(const char* op, const Tensor& x, const Tensor& w, const Tensor& y) {
  check_operands(op, x, w);
  expect_dtype(op, "y", y, DType::BF16);
  expect_shape(op, "y", y, {x.dim(0), w.dim(0)});
  if (y.data == x.data && y.nbytes() > 0) fail(std::string(op) + ": y must not alias x");
}

// y as k-share sums: F32 [P, n, N], P dividing K; on CUDA exactly the kernel's P.
void check_k_share_sums(const char* op, Device dev, const Tensor& x, const Tensor& w, const Tensor& y) {
  check_operands(op, x, w);
  const int64_t K = x.dim(1);
  if (y.rank() != 3 || y.dim(0) < 1 || K % y.dim(0) != 0 || y.dim(1) != x.dim(0) || y.dim(2) != w.dim(0))
    fail(std::string(op) + ": y is " + y.describe() + ", expected BF16 [" + std::to_string(x.dim(0)) + ", " +
         std::to_string(w.dim(0)) + "] or F32 [P, " + std::to_string(x.dim(0)) + ", " + std::to_string(w.dim(0)) +
         "] k-share sums with P dividing K = " + std::to_string(K));
  const int64_t offered = linear_k_shares(dev, x.dim(0), K, w.dim(0));
  if (dev != Device::CPU && y.dim(0) != offered)
    fail(std::string(op) + ": y holds " + std::to_string(y.dim(0)) + " k shares; this device's kernel makes " +
         std::to_string(offered) + " for these sizes (linear_k_shares)");
}

}  // namespace

void linear(const Tensor& x, const Tensor& w, Tensor& y) {
  const char* op = "linear";
  Device dev = common_device(op, {&x, &w, &y});
  if (y.dtype == DType::F32) check_k_share_sums(op, dev, x, w, y);
  else check_linear(op, x, w, y);
  run_kernel(op, dev, cpu::linear, TF_CUDA_KERNEL(cuda::linear), x, w, y);
}

void linear(const Tensor& x, const Tensor& w, Tensor& y, const LinearEpilogue& e) {
  const char* op = "linear";
  if (e.residual || e.gate || e.norm_weight || e.norm_out || e.shift || e.scale)
    fail(std::string(op) + ": a residual, gate or norm epilogue takes no y (use linear(x, w, epilogue))");
  if (!e.bias) return linear(x, w, y);
  Device dev = common_device(op, {&x, &w, &y, e.bias});
  check_linear(op, x, w, y);
  expect_bf16_or_f32(op, "bias", *e.bias);
  expect_shape(op, "bias", *e.bias, {w.dim(0)});
  run_kernel("linear (bias)", dev, cpu::linear_bias, TF_CUDA_KERNEL(cuda::linear_bias), x, w, *e.bias, y);
}

void linear(const Tensor& x, const Tensor& w, const LinearEpilogue& e) {
  const char* op = "linear (residual)";
  if (!e.residual) fail(std::string(op) + ": no residual to add the product to (use linear(x, w, y, epilogue))");
  if (!e.norm_weight != !e.norm_out) fail(std::string(op) + ": a norm after the add needs both its weight and its output");
  const bool modulated = e.shift || e.scale;
  if (modulated && (!e.shift || !e.scale || !e.norm_weight || e.norm.weight != NormWeight::plain))
    fail(std::string(op) + ": a modulated norm needs shift, scale and a plain norm weight");
  Tensor& h = *e.residual;
  Device dev = common_device(op, {&x, &w, &h});
  check_operands(op, x, w);
  expect_dtype(op, "residual", h, DType::BF16);
  expect_shape(op, "residual", h, {x.dim(0), w.dim(0)});
  if (e.gate && !e.bias && !e.norm_weight) {  // one op, so CUDA can put the gated add in the product's epilogue
    expect_dtype(op, "gate", *e.gate, DType::BF16);
    expect_shape(op, "gate", *e.gate, {w.dim(0)});
    common_device(op, {&x, &w, &h, e.gate});
    return run_kernel("linear (gated residual)", dev, cpu::linear_gated_residual,
                      TF_CUDA_KERNEL(cuda::linear_gated_residual), x, w, *e.gate, h);
  }
  Tensor y;
  if (e.bias || e.gate) {
    y = empty(DType::BF16, h.shape, dev);
    linear(x, w, y, LinearEpilogue{.bias = e.bias});
    if (modulated && e.gate)
      return residual_add_rms_norm_modulate(h, y, *e.gate, *e.norm_weight, e.norm.eps, *e.shift, *e.scale, *e.norm_out);
    residual_add(h, y, e.gate);
  } else {
    const int64_t P = linear_k_shares(dev, x.dim(0), x.dim(1), w.dim(0));
    y = P ? empty(DType::F32, {P, x.dim(0), w.dim(0)}, dev) : empty(DType::BF16, h.shape, dev);
    linear(x, w, y);
    if (e.norm_weight && !modulated) return residual_add_rms_norm(h, y, *e.norm_weight, e.norm, *e.norm_out);
    residual_add(h, y);
  }
  if (modulated) rms_norm_modulate(h, *e.norm_weight, e.norm.eps, *e.shift, *e.scale, *e.norm_out);
  else if (e.norm_weight) rms_norm(h, *e.norm_weight, e.norm, *e.norm_out);
}

int64_t linear_k_shares(Device d, int64_t n, int64_t K, int64_t N) {
  if (d == Device::CPU) return cpu::linear_k_shares(n, K, N);
#ifdef TF_HAVE_CUDA
  if (d == Device::CUDA) return cuda::linear_k_shares(n, K, N);
#endif
  return 0;
}

void linear_shared_input(const Tensor& x, std::initializer_list<LinearPart> parts) {
  const char* op = "linear_shared_input";
  if (parts.size() == 0) fail(std::string(op) + ": no weights");
  for (const LinearPart& p : parts) {
    common_device(op, {&x, p.w, p.y});
    check_linear(op, x, *p.w, *p.y);
  }
  run_kernel(op, x.device, cpu::linear_shared_input, TF_CUDA_KERNEL(cuda::linear_shared_input), x,
             std::span<const LinearPart>(parts.begin(), parts.size()));
}

}  // namespace tf
