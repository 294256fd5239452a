// The CUDA rounding models (split-bf16 tensor cores) admit a host emulation of the numerics the op
// headers declare for CUDA, and reject the same emulation with a part of the split dropped.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "check/contract/inputs.h"
#include "check/contract/runner.h"

using namespace tf;
using namespace tf::contract;

namespace {

// The registered CUDA model, checked on the host against `emulation`.
KernelOutcome run_against_cuda_model(const std::string& name, RunFn emulation) {
  KernelContract k = registered_kernel(name);
  EXPECT_TRUE(static_cast<bool>(k.cuda_reference)) << name << " declares no CUDA rounding model";
  k.reference = k.cuda_reference;
  k.run = std::move(emulation);
  std::unique_ptr<FILE, int (*)(FILE*)> sink(std::tmpfile(), std::fclose);
  return run_kernel_contract(k, ContractOptions{}, sink.get());
}

struct Parts {
  float hi, lo;
};
// The kernel's split; `drop_lo` plants the fault of a plain bf16 operand.
Parts split(float x, bool drop_lo) {
  const float hi = static_cast<float>(bf16_of(x));
  return {hi, drop_lo ? 0.0f : static_cast<float>(bf16_of(x - hi))};
}

// hi*hi + hi*lo + lo*hi, each product exact in fp32, added in order.
float split_dot_step(float acc, float a, float b, bool drop_lo) {
  Parts x = split(a, drop_lo), y = split(b, drop_lo);
  acc += x.hi * y.hi;
  acc += x.hi * y.lo;
  acc += x.lo * y.hi;
  return acc;
}

void conv2d_emulation(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, bool drop_lo) {
  const int stride = static_cast<int>(p[0]), pt = static_cast<int>(p[1]), pl = static_cast<int>(p[2]);
  const Tensor &x = in[0], &w = in[1];
  const int64_t ci = x.dim(0), h = x.dim(1), wd = x.dim(2), co = w.dim(0), kh = w.dim(2), kw = w.dim(3);
  const int64_t ho = out[0].dim(1), wo = out[0].dim(2);
  std::vector<double> xv = values_of(x), wv = values_of(w), bv = values_of(in[2]), y(static_cast<size_t>(co * ho * wo));
  std::vector<double> rv = p[5] != 0 ? values_of(in[3]) : std::vector<double>{};
  for (int64_t o = 0; o < co; ++o)
    for (int64_t i = 0; i < ho; ++i)
      for (int64_t j = 0; j < wo; ++j) {
        float acc = 0;
        for (int64_t c = 0; c < ci; ++c)
          for (int64_t a = 0; a < kh; ++a)
            for (int64_t b = 0; b < kw; ++b) {
              const int64_t yy = i * stride - pt + a, xx = j * stride - pl + b;
              if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
              acc = split_dot_step(acc, static_cast<float>(wv[((o * ci + c) * kh + a) * kw + b]),
                                   static_cast<float>(xv[(c * h + yy) * wd + xx]), drop_lo);
            }
        float v = acc + static_cast<float>(bv[o]);
        if (!rv.empty()) v += static_cast<float>(rv[(o * ho + i) * wo + j]);
        y[(o * ho + i) * wo + j] = v;
      }
  set_values(out[0], y);
}

void attention_emulation(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, bool drop_lo) {
  const int64_t d = in[0].dim(0), n = in[0].dim(1);
  const float scale = static_cast<float>(p[0]);
  std::vector<double> q = values_of(in[0]), k = values_of(in[1]), v = values_of(in[2]), o(q.size());
  std::vector<float> s(static_cast<size_t>(n)), pr(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float m = -INFINITY;
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t c = 0; c < d; ++c)
        acc = split_dot_step(acc, static_cast<float>(q[c * n + i]), static_cast<float>(k[c * n + j]), drop_lo);
      s[j] = acc * scale;
      m = std::fmax(m, s[j]);
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += std::exp(s[j] - m);
    const float l = static_cast<float>(sum);
    for (int64_t j = 0; j < n; ++j) pr[j] = std::exp(s[j] - m) / l;
    for (int64_t c = 0; c < d; ++c) {
      float acc = 0;
      for (int64_t j = 0; j < n; ++j) acc = split_dot_step(acc, static_cast<float>(v[c * n + j]), pr[j], drop_lo);
      o[c * n + i] = acc;
    }
  }
  set_values(out[0], o);
}

}  // namespace

TEST(CudaRoundingModels, Conv2dAdmitsTheDeclaredSplit) {
  KernelOutcome o = run_against_cuda_model("conv2d", [](const std::vector<Tensor>& in, std::vector<Tensor>& out,
                                                        const Params& p) { conv2d_emulation(in, out, p, false); });
  EXPECT_TRUE(o.pass) << (o.problems.empty() ? "" : o.problems[0]);
  // Every control is red against the CUDA model but the split itself, which is CUDA's numerics.
  EXPECT_EQ(o.missed, 1);
  EXPECT_EQ(o.red, o.controls - 1);
}

TEST(CudaRoundingModels, Conv2dRejectsPlainBf16Inputs) {
  KernelOutcome o = run_against_cuda_model("conv2d", [](const std::vector<Tensor>& in, std::vector<Tensor>& out,
                                                        const Params& p) { conv2d_emulation(in, out, p, true); });
  EXPECT_FALSE(o.pass);
}

TEST(CudaRoundingModels, AttentionAdmitsTheDeclaredSplit) {
  KernelOutcome o = run_against_cuda_model(
      "attention_f32_channels",
      [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) { attention_emulation(in, out, p, false); });
  EXPECT_TRUE(o.pass) << (o.problems.empty() ? "" : o.problems[0]);
  EXPECT_EQ(o.missed, 0);
}

TEST(CudaRoundingModels, AttentionRejectsPlainBf16Operands) {
  KernelOutcome o = run_against_cuda_model(
      "attention_f32_channels",
      [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) { attention_emulation(in, out, p, true); });
  EXPECT_FALSE(o.pass);
}

TEST(CudaRoundingModels, TheCpuModelRejectsTheSplit) {
  // The split is a fault on the CPU (its header declares full fp32 inputs): the CPU model sees it.
  KernelContract k = registered_kernel("conv2d");
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) { conv2d_emulation(in, out, p, false); };
  std::unique_ptr<FILE, int (*)(FILE*)> sink(std::tmpfile(), std::fclose);
  EXPECT_FALSE(run_kernel_contract(k, ContractOptions{}, sink.get()).pass);
}
