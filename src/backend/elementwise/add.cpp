#include "backend/elementwise/add.h"

#include "backend/device/dispatch.h"

namespace tf {

void add(const Tensor& a, const Tensor& b, Tensor& y) {
  const char* op = "add";
  expect_elementwise(op, DType::F32, {{"a", a}, {"b", b}, {"y", y}});
  const Device d = common_device(op, {&a, &b, &y});
  run_kernel(op, d, cpu::add, TF_CUDA_KERNEL(cuda::add), a, b, y);
}

}  // namespace tf
