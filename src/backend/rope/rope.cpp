#include "backend/rope/rope.h"

#include <algorithm>

#include "backend/device/dispatch.h"

namespace tf {

void rope(const Tensor& x, const RopeTables& tables, const RopePositions& positions, Tensor& y) {
  const char* op = "rope";
  const Tensor &cos = tables.cos, &sin = tables.sin;
  const SeqOffsets& seq_offsets = positions.sequences;
  Device dev = common_device(op, {&x, &cos, &sin, &y});
  expect_dtypes(op, DType::BF16, {{"x", x}, {"cos", cos}, {"sin", sin}, {"y", y}});
  if (x.rank() != 3) fail(std::string(op) + ": x is " + x.describe() + ", expected [T, heads, head_dim]");
  if (cos.rank() != 2 || cos.dim(1) < 1 || 2 * cos.dim(1) > x.dim(2))
    fail(std::string(op) + ": cos is " + cos.describe() + ", expected [positions, half] with 2 * half <= head_dim " +
         std::to_string(x.dim(2)));
  expect_shape(op, "sin", sin, cos.shape);
  expect_shape(op, "y", y, x.shape);
  check_seq_offsets(op, seq_offsets, x.dim(0));
  int64_t longest = 0;
  for (size_t s = 0; s + 1 < seq_offsets.size(); ++s) longest = std::max(longest, seq_offsets[s + 1] - seq_offsets[s]);
  if (longest > cos.dim(0))
    fail(std::string(op) + ": a sequence of " + std::to_string(longest) + " tokens needs rope tables of at least that " +
         "many positions, got " + std::to_string(cos.dim(0)));
  run_kernel(op, dev, cpu::rope_split_half, TF_CUDA_KERNEL(cuda::rope_split_half), x, cos, sin, seq_offsets, y);
}

}  // namespace tf
