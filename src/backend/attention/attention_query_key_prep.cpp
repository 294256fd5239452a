#include "backend/attention/attention_query_key_prep.h"

#include <algorithm>

#include "backend/device/dispatch.h"

namespace tf {

void attention_query_key_prep(const Tensor& qg, const Tensor& kraw, const Tensor& q_norm, const Tensor& k_norm,
                              float eps, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& q,
                              Tensor& k, Tensor& gate) {
  const char* op = "attention_query_key_prep";
  Device dev = common_device(op, {&qg, &kraw, &q_norm, &k_norm, &cos, &sin, &q, &k, &gate});
  expect_dtypes(op, DType::BF16,
                {{"qg", qg}, {"kraw", kraw}, {"cos", cos}, {"sin", sin}, {"q", q}, {"k", k}, {"gate", gate}});
  if (q.rank() != 3 || k.rank() != 3 || k.dim(0) != q.dim(0) || k.dim(2) != q.dim(2) || q.dim(2) < 1)
    fail(std::string(op) + ": q is " + q.describe() + " and k " + k.describe() +
         ", expected [T, Hq, d] and [T, Hkv, d] with the same T and d");
  const int64_t T = q.dim(0), Hq = q.dim(1), Hkv = k.dim(1), d = q.dim(2);
  expect_shape(op, "qg", qg, {T, Hq * 2 * d});
  expect_shape(op, "kraw", kraw, {T, Hkv * d});
  expect_shape(op, "gate", gate, q.shape);
  expect_bf16_or_f32(op, "q_norm", q_norm);
  expect_bf16_or_f32(op, "k_norm", k_norm);
  expect_shape(op, "q_norm", q_norm, {d});
  expect_shape(op, "k_norm", k_norm, {d});
  if (cos.rank() != 2 || cos.dim(1) < 1 || 2 * cos.dim(1) > d)
    fail(std::string(op) + ": cos is " + cos.describe() + ", expected [positions, half] with 2 * half <= head_dim " +
         std::to_string(d));
  expect_shape(op, "sin", sin, cos.shape);
  check_seq_offsets(op, seq_offsets, T);
  int64_t longest = 0;
  for (size_t s = 0; s + 1 < seq_offsets.size(); ++s) longest = std::max(longest, seq_offsets[s + 1] - seq_offsets[s]);
  if (longest > cos.dim(0))
    fail(std::string(op) + ": a sequence of " + std::to_string(longest) + " tokens needs rope tables of at least that " +
         "many positions, got " + std::to_string(cos.dim(0)));
  const Tensor* all[5] = {&q, &k, &gate, &qg, &kraw};  // the outputs first
  for (int o = 0; o < 3; ++o)
    for (int i = 0; i < 5; ++i)
      if (i != o && all[o]->nbytes() > 0 && all[o]->data == all[i]->data)
        fail(std::string(op) + ": an output aliases another tensor of the op");
  run_kernel(op, dev, cpu::attention_query_key_prep, TF_CUDA_KERNEL(cuda::attention_query_key_prep), qg, kraw, q_norm,
             k_norm, eps, cos, sin, seq_offsets, q, k, gate);
}

}  // namespace tf
