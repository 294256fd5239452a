#include "backend/linear.h"

#include "backend/cpu/transformer_ops.h"
#include "backend/dispatch.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/transformer_ops.h"
#endif

namespace tf {

namespace {

void check_linear(const char* op, const Tensor& x, const Tensor& w, const Tensor& y) {
  expect_dtypes(op, DType::BF16, {{"x", x}, {"w", w}, {"y", y}});
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected [n, K]");
  if (w.rank() != 2 || w.dim(1) != x.dim(1))
    fail(std::string(op) + ": w is " + w.describe() + ", expected [N, " + std::to_string(x.dim(1)) + "] for x " +
         x.describe());
  expect_shape(op, "y", y, {x.dim(0), w.dim(0)});
  if (y.data == x.data && y.nbytes() > 0) fail(std::string(op) + ": y must not alias x");
}

}  // namespace

void linear(const Tensor& x, const Tensor& w, Tensor& y) {
  const char* op = "linear";
  Device dev = common_device(op, {&x, &w, &y});
  check_linear(op, x, w, y);
  run_kernel(op, dev, cpu::linear, TF_CUDA_KERNEL(cuda::linear), x, w, y);
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
