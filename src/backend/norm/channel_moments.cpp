#include "backend/norm/channel_moments.h"

#include "backend/device/dispatch.h"

namespace tf {

void check_channel_moments(const char* op, const char* arg, const Tensor& m, int64_t C) {
  expect_dtype(op, arg, m, DType::F64);
  expect_shape(op, arg, m, {C, 2});
}

void channel_moments(const Tensor& x, Tensor& m) {
  const char* op = "channel_moments";
  expect_dtype(op, "x", x, DType::F32);
  require(x.rank() >= 1, std::string(op) + ": x is " + x.describe() + ", expected [C, ...]");
  check_channel_moments(op, "m", m, x.dim(0));
  const Device d = common_device(op, {&x, &m});
  run_kernel(op, d, cpu::channel_moments, TF_CUDA_KERNEL(cuda::channel_moments), x, m);
}

}  // namespace tf
