#include "backend/embed/embedding.h"

#include "backend/device/dispatch.h"

namespace tf {

void embedding(const Tensor& table, const Tensor& ids, Tensor& out, IdCheck check) {
  const char* op = "embedding";
  Device dev = common_device(op, {&table, &ids, &out});
  expect_dtype(op, "table", table, DType::BF16);
  expect_dtype(op, "ids", ids, DType::I32);
  expect_dtype(op, "out", out, DType::BF16);
  if (table.rank() != 2) fail(std::string(op) + ": table is " + table.describe() + ", expected [vocab, hidden]");
  if (ids.rank() != 1) fail(std::string(op) + ": ids is " + ids.describe() + ", expected [n]");
  expect_shape(op, "out", out, {ids.dim(0), table.dim(1)});
  run_kernel(op, dev, cpu::embedding, TF_CUDA_KERNEL(cuda::embedding), table, ids, out, check);
}

}  // namespace tf
