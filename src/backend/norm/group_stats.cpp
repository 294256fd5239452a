#include "backend/norm/group_stats.h"

#include <string>

#include "backend/device/dispatch.h"

namespace tf {

GroupStats make_group_stats(int groups, float eps, Device d) {
  require(groups >= 1, "group statistics: " + std::to_string(groups) + " groups (at least 1)");
  return {groups, eps, empty(DType::F64, {groups, 2}, d)};
}

void check_group_stats(const char* op, const char* arg, const GroupStats& s, int64_t channels, Device d) {
  const std::string name = std::string(op) + ": " + arg + " ";
  require(s.groups >= 1 && channels % s.groups == 0,
          name + std::to_string(s.groups) + " groups do not divide " + std::to_string(channels) + " channels");
  require(s.eps >= 0.0f, name + "eps must be >= 0");
  expect_dtype(op, arg, s.mean_rstd, DType::F64);
  expect_shape(op, arg, s.mean_rstd, {s.groups, 2});
  require(s.mean_rstd.device == d, name + "is on another device than the picture (" + s.mean_rstd.describe() + ")");
}

void group_stats(const Tensor& x, GroupStats& s) {
  const char* op = "group_stats";
  expect_dtype(op, "x", x, DType::F32);
  require(x.rank() >= 2, std::string(op) + ": x is " + x.describe() + ", expected [C, H, W] or [C, N]");
  check_group_stats(op, "stats", s, x.dim(0), x.device);
  run_kernel(op, x.device, cpu::group_stats, TF_CUDA_KERNEL(cuda::group_stats), x, s);
}

}  // namespace tf
