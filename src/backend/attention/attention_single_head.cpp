#include "backend/attention/attention_single_head.h"

#include "backend/cpu/vae_ops.h"
#include "backend/device/dispatch.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/kernels/conv/vae_ops.h"
#endif

namespace tf {

void attention_single_head(const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& o) {
  const char* op = "attention_single_head";
  expect_dtypes(op, DType::F32, {{"q", q}, {"k", k}, {"v", v}, {"o", o}});
  require(q.rank() == 2, std::string(op) + ": q is " + q.describe() + ", expected [D, N]");
  require(q.dim(1) >= 1, std::string(op) + ": q has no positions");
  expect_shapes(op, q.shape, {{"k", k}, {"v", v}, {"o", o}});
  require(o.data != q.data && o.data != k.data && o.data != v.data, std::string(op) + ": o may not alias q, k or v");
  const Device d = common_device(op, {&q, &k, &v, &o});
  run_kernel(op, d, cpu::attention_single_head, TF_CUDA_KERNEL(cuda::attention_single_head), q, k, v, scale, o);
}

}  // namespace tf
