#include "backend/attention/attention.h"

#include "backend/device/dispatch.h"

namespace tf {

namespace {

void tokens_heads(const char* op, Device dev, const Tensor& q, const Tensor& k, const Tensor& v,
                  const AttentionOptions& o, Tensor& out) {
  expect_dtypes(op, DType::BF16, {{"q", q}, {"k", k}, {"v", v}, {"o", out}});
  if (q.rank() != 3) fail(std::string(op) + ": q is " + q.describe() + ", expected [T, Hq, d]");
  if (k.rank() != 3 || k.dim(0) != q.dim(0) || k.dim(2) != q.dim(2))
    fail(std::string(op) + ": k is " + k.describe() + ", expected [" + std::to_string(q.dim(0)) + ", Hkv, " +
         std::to_string(q.dim(2)) + "]");
  if (k.dim(1) < 1 || q.dim(1) % k.dim(1) != 0)
    fail(std::string(op) + ": query heads (" + std::to_string(q.dim(1)) + ") must be a multiple of kv heads (" +
         std::to_string(k.dim(1)) + ")");
  expect_shape(op, "v", v, k.shape);
  expect_shape(op, "o", out, q.shape);
  if (out.nbytes() > 0 && (out.data == q.data || out.data == k.data || out.data == v.data))
    fail(std::string(op) + ": o must not alias q, k or v");
  const SeqOffsets one = o.sequences.empty() ? single_sequence(q.dim(0)) : SeqOffsets();
  const SeqOffsets& seqs = o.sequences.empty() ? one : o.sequences;
  check_seq_offsets(op, seqs, q.dim(0));
  if (o.numerics == AttentionNumerics::fused) {
    if (o.mask == AttentionMask::causal)
      return run_kernel("attention (fused, causal)", dev, cpu::attention_fused_causal,
                        TF_CUDA_KERNEL(cuda::attention_fused_causal), q, k, v, o.scale, seqs, out);
    return run_kernel("attention (fused, mask none)", dev, cpu::attention_fused_bidirectional,
                      TF_CUDA_KERNEL(cuda::attention_fused_bidirectional), q, k, v, o.scale, seqs, out);
  }
  if (o.mask == AttentionMask::causal)
    return run_kernel(op, dev, cpu::attention_bf16_causal, TF_CUDA_KERNEL(cuda::attention_bf16_causal), q, k, v,
                      o.scale, seqs, out);
  run_kernel("attention (tokens_heads, mask none)", dev, cpu::attention_bf16_bidirectional, nullptr, q, k, v, o.scale,
             seqs, out);
}

void channels(const char* op, Device dev, const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o,
              Tensor& out) {
  expect_dtypes(op, DType::F32, {{"q", q}, {"k", k}, {"v", v}, {"o", out}});
  require(q.rank() == 2, std::string(op) + ": q is " + q.describe() + ", expected [D, N]");
  require(q.dim(1) >= 1, std::string(op) + ": q has no positions");
  expect_shapes(op, q.shape, {{"k", k}, {"v", v}, {"o", out}});
  require(out.data != q.data && out.data != k.data && out.data != v.data, std::string(op) + ": o may not alias q, k or v");
  require(o.mask == AttentionMask::none, std::string(op) + ": the channels layout has no causal mask");
  require(o.numerics == AttentionNumerics::eager_bf16,
          std::string(op) + ": the channels layout has its own fp32-class numerics (leave numerics at its default)");
  require(o.sequences.empty() || o.sequences.size() == 2,
          std::string(op) + ": the channels layout takes one sequence, not packed ones");
  run_kernel(op, dev, cpu::attention_f32_channels, TF_CUDA_KERNEL(cuda::attention_f32_channels), q, k, v, o.scale, out);
}

}  // namespace

void attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& options, Tensor& o) {
  const char* op = "attention";
  Device dev = common_device(op, {&q, &k, &v, &o});
  if (options.layout == AttentionLayout::channels) return channels(op, dev, q, k, v, options, o);
  tokens_heads(op, dev, q, k, v, options, o);
}

}  // namespace tf
