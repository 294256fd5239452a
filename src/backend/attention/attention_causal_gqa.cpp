#include "backend/attention/attention_causal_gqa.h"

#include "backend/cpu/transformer_ops.h"
#include "backend/device/dispatch.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/kernels/transformer_ops.h"
#endif

namespace tf {

void attention_causal_gqa(const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                          const SeqOffsets& seq_offsets, Tensor& o) {
  const char* op = "attention_causal_gqa";
  Device dev = common_device(op, {&q, &k, &v, &o});
  expect_dtypes(op, DType::BF16, {{"q", q}, {"k", k}, {"v", v}, {"o", o}});
  if (q.rank() != 3) fail(std::string(op) + ": q is " + q.describe() + ", expected [T, Hq, d]");
  if (k.rank() != 3 || k.dim(0) != q.dim(0) || k.dim(2) != q.dim(2))
    fail(std::string(op) + ": k is " + k.describe() + ", expected [" + std::to_string(q.dim(0)) + ", Hkv, " +
         std::to_string(q.dim(2)) + "]");
  if (k.dim(1) < 1 || q.dim(1) % k.dim(1) != 0)
    fail(std::string(op) + ": query heads (" + std::to_string(q.dim(1)) + ") must be a multiple of kv heads (" +
         std::to_string(k.dim(1)) + ")");
  expect_shape(op, "v", v, k.shape);
  expect_shape(op, "o", o, q.shape);
  if (o.nbytes() > 0 && (o.data == q.data || o.data == k.data || o.data == v.data))
    fail(std::string(op) + ": o must not alias q, k or v");
  check_seq_offsets(op, seq_offsets, q.dim(0));
  run_kernel(op, dev, cpu::attention_causal_gqa, TF_CUDA_KERNEL(cuda::attention_causal_gqa),
             q, k, v, scale, seq_offsets, o);
}

}  // namespace tf
