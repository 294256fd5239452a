#include "backend/norm/group_norm.h"

#include "backend/device/dispatch.h"

namespace tf {

void check_group_norm(const char* op, const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps,
                      const Tensor& y) {
  expect_dtype(op, "x", x, DType::F32);
  expect_dtypes(op, DType::BF16, {{"gamma", gamma}, {"beta", beta}});
  expect_dtype(op, "y", y, DType::F32);
  require(x.rank() >= 2, std::string(op) + ": x is " + x.describe() + ", expected [C, H, W] or [C, N]");
  const int64_t c = x.dim(0);
  require(groups >= 1 && c % groups == 0,
          std::string(op) + ": " + std::to_string(groups) + " groups do not divide " + std::to_string(c) + " channels");
  require(eps >= 0.0f, std::string(op) + ": eps must be >= 0");
  expect_shapes(op, {c}, {{"gamma", gamma}, {"beta", beta}});
  expect_shape(op, "y", y, x.shape);
}

void check_given_group_stats(const char* op, const GroupStats& s, int groups, float eps, const Tensor& x) {
  check_group_stats(op, "x_stats", s, x.dim(0), x.device);
  require(s.groups == groups && s.eps == eps, std::string(op) + ": x_stats were taken for " + std::to_string(s.groups) +
                                                  " groups and eps " + std::to_string(s.eps) + ", not " +
                                                  std::to_string(groups) + " and " + std::to_string(eps));
}

void group_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                Tensor& y, const GroupStats* x_stats) {
  const char* op = "group_norm";
  check_group_norm(op, x, gamma, beta, groups, eps, y);
  const Device d = common_device(op, {&x, &gamma, &beta, &y});
  if (x_stats) check_given_group_stats(op, *x_stats, groups, eps, x);
  run_kernel(op, d, cpu::group_norm, TF_CUDA_KERNEL(cuda::group_norm), x, gamma, beta, groups, eps, silu, y, x_stats);
}

}  // namespace tf
