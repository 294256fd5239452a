// The contract's framework catches planted faults: a kernel that is right passes and its controls go
// red; a kernel with a fault fails; a control that changes nothing is reported missed.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "check/contract/gates.h"
#include "check/contract/inputs.h"
#include "check/contract/kernels/common.h"
#include "check/contract/runner.h"
#include "core/bf16.h"

using namespace tf;
using namespace tf::contract;

namespace {

// A toy kernel: y[r] = bf16(sum_k x[r, k] * w[k]) with an fp32 sum. `fault` plants one defect.
enum class Fault { None, DropTerm, Bf16Accumulate, LeaveLastUnwritten, Nondeterministic, NoOutputRounding };

void row_dot(const std::vector<Tensor>& in, std::vector<Tensor>& out, Fault fault) {
  static int calls = 0;
  ++calls;
  const Tensor &x = in[0], &w = in[1];
  int64_t n = x.dim(0), k = x.dim(1);
  std::vector<double> xv = values_of(x), wv = values_of(w);
  std::vector<double> y(n);
  for (int64_t r = 0; r < n; ++r) {
    float acc = 0;
    for (int64_t i = 0; i < k; ++i) {
      if (fault == Fault::DropTerm && i == k - 1) continue;
      acc += static_cast<float>(xv[r * k + i]) * static_cast<float>(wv[i]);
      if (fault == Fault::Bf16Accumulate) acc = round_bf16(acc);
    }
    if (fault == Fault::Nondeterministic && r == 0 && calls % 2) acc = std::nextafter(acc, 1e30f) * 1.01f;
    y[r] = acc;
  }
  if (fault == Fault::NoOutputRounding) {
    // Truncation instead of rounding to nearest: what skipping the rounding step does to the bits.
    for (int64_t r = 0; r < n; ++r)
      out[0].ptr<uint16_t>()[r] = static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(y[r])) >> 16);
    return;
  }
  Tensor& o = out[0];
  for (int64_t r = 0; r < (fault == Fault::LeaveLastUnwritten ? n - 1 : n); ++r)
    o.ptr<uint16_t>()[r] = bf16_bits_from_float(static_cast<float>(y[r]));
}

KernelContract toy(Fault fault) {
  KernelContract k;
  k.name = "row_dot";
  k.families = {"test"};
  k.backends = {Device::CPU};
  k.random_cases = [](Rng& rng) {
    std::vector<Case> cs;
    for (int64_t kk : {7, 64, 65, 300}) {
      Case c;
      c.label = label({{"k", kk}});
      c.inputs = {random_normal(rng, DType::BF16, {33, kk}), random_normal(rng, DType::BF16, {kk})};
      c.outputs = {host_empty(DType::BF16, {33})};
      cs.push_back(c);
    }
    return cs;
  };
  k.adversarial_cases = [](Rng&) {
    // Exact cancellation: 2^20 - 2^20 + 1.
    Case c;
    c.label = "cancellation";
    std::vector<double> x{0x1p20, -0x1p20, 1.0}, w{1, 1, 1};
    c.inputs = {host_tensor(DType::BF16, {1, 3}, x), host_tensor(DType::BF16, {3}, w)};
    c.outputs = {host_empty(DType::BF16, {1})};
    return std::vector<Case>{c};
  };
  k.reference = [](const Case& c) {
    auto x = tracked_of(c.inputs[0]), w = tracked_of(c.inputs[1]);
    int64_t n = c.inputs[0].dim(0), kk = c.inputs[0].dim(1);
    std::vector<Tracked> y(n);
    for (int64_t r = 0; r < n; ++r)
      y[r] = round_bf16_point(f32_dot(std::span(x).subspan(r * kk, kk), w));
    return Reference{y};
  };
  k.run = [fault](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { row_dot(in, out, fault); };
  k.controls = {
      reimplemented("bf16-accumulation", [](auto& in, auto& out, auto&) { row_dot(in, out, Fault::Bf16Accumulate); }),
      reimplemented("dropped-term", [](auto& in, auto& out, auto&) { row_dot(in, out, Fault::DropTerm); }),
      reimplemented("truncated-output", [](auto& in, auto& out, auto&) { row_dot(in, out, Fault::NoOutputRounding); }),
  };
  return k;
}

KernelOutcome run(const KernelContract& k) {
  std::unique_ptr<FILE, int (*)(FILE*)> sink(std::tmpfile(), std::fclose);
  return run_kernel_contract(k, ContractOptions{}, sink.get());
}

}  // namespace

TEST(ContractFramework, ACorrectKernelPassesAndItsControlsGoRed) {
  KernelOutcome o = run(toy(Fault::None));
  EXPECT_TRUE(o.pass) << (o.problems.empty() ? "" : o.problems[0]);
  EXPECT_EQ(o.controls, 3);
  EXPECT_EQ(o.red, 3);
  EXPECT_EQ(o.missed, 0);
}

TEST(ContractFramework, PlantedFaultsInTheKernelFail) {
  for (Fault f : {Fault::DropTerm, Fault::Bf16Accumulate, Fault::LeaveLastUnwritten, Fault::Nondeterministic,
                  Fault::NoOutputRounding}) {
    KernelOutcome o = run(toy(f));
    EXPECT_FALSE(o.pass) << static_cast<int>(f);
  }
}

TEST(ContractFramework, UnwrittenOutputsAreGateOneFailures) {
  KernelOutcome o = run(toy(Fault::LeaveLastUnwritten));
  ASSERT_FALSE(o.problems.empty());
  EXPECT_NE(o.problems[0].find("gate 1"), std::string::npos) << o.problems[0];
  EXPECT_NE(o.problems[0].find("unwritten"), std::string::npos) << o.problems[0];
}

TEST(ContractFramework, AControlThatChangesNothingIsMissed) {
  KernelContract k = toy(Fault::None);
  k.controls = {perturbed_inputs("no-op", [](std::vector<Tensor>&) {})};
  KernelOutcome o = run(k);
  EXPECT_EQ(o.missed, 1);
  EXPECT_EQ(o.red, 0);
}

TEST(ContractFramework, SummaryLineHasTheAgreedForm) {
  ContractSummary s;
  s.kernels = 3;
  s.pass = 2;
  s.fail = 1;
  s.controls = 5;
  s.red = 4;
  s.missed = 1;
  EXPECT_EQ(summary_line(s),
            "SUMMARY 3 kernels: 2 pass gates 1-4, 1 fail, 0 known findings; 5 controls: 4 red as planted, 1 missed; 0 limit problems");
  EXPECT_FALSE(s.ok());
}

TEST(ContractFramework, ComparisonCountsPoisonAsUnwritten) {
  std::vector<Tensor> out{host_empty(DType::F32, {4})};
  poison(out, Poison::AllOnes);
  Reference ref{{exact(1), exact(2), exact(3), exact(4)}};
  Comparison c = compare(out, ref, Poison::AllOnes);
  EXPECT_EQ(c.unwritten, 4);
}
