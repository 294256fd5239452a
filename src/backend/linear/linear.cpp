#include "backend/linear/linear.h"

#include "backend/cpu/transformer_ops.h"
#include "backend/device/dispatch.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/kernels/transformer_ops.h"
#endif

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
