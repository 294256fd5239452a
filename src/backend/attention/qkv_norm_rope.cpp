#include "backend/attention/qkv_norm_rope.h"

#include "backend/device/dispatch.h"

namespace tf {

void qkv_norm_rope(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, float eps, const RopeTables& tables,
                   Tensor& q, Tensor& k, Tensor& v) {
  const char* op = "qkv_norm_rope";
  const Tensor &cos = tables.cos, &sin = tables.sin;
  Device dev = common_device(op, {&qkv, &q_norm, &k_norm, &cos, &sin, &q, &k, &v});
  expect_dtypes(op, DType::BF16, {{"qkv", qkv}, {"q_norm", q_norm}, {"k_norm", k_norm}, {"q", q}, {"k", k}, {"v", v}});
  expect_dtypes(op, DType::F32, {{"cos", cos}, {"sin", sin}});
  if (q.rank() != 3 || q.dim(2) < 1) fail(std::string(op) + ": q is " + q.describe() + ", expected [T, H, d]");
  const int64_t T = q.dim(0), H = q.dim(1), d = q.dim(2);
  expect_shapes(op, q.shape, {{"k", k}, {"v", v}});
  expect_shape(op, "qkv", qkv, {T, 3 * H * d});
  expect_shapes(op, {d}, {{"q_norm", q_norm}, {"k_norm", k_norm}});
  if (d % 2 != 0) fail(std::string(op) + ": head_dim " + std::to_string(d) + " must be even (RoPE turns the whole head)");
  expect_shape(op, "cos", cos, {T, d / 2});
  expect_shape(op, "sin", sin, cos.shape);
  const Tensor* all[4] = {&q, &k, &v, &qkv};  // the outputs first
  for (int o = 0; o < 3; ++o)
    for (int i = 0; i < 4; ++i)
      if (i != o && all[o]->nbytes() > 0 && all[o]->data == all[i]->data)
        fail(std::string(op) + ": an output aliases another tensor of the op");
  run_kernel(op, dev, cpu::qkv_norm_rope, TF_CUDA_KERNEL(cuda::qkv_norm_rope), qkv, q_norm, k_norm, eps, cos, sin, q, k,
             v);
}

}  // namespace tf
