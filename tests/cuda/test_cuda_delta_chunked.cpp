// The chunked gated delta rule on CUDA: against a float64 recurrence computed here, within the
// contract's allowance for the fp32 recurrence, byte-identical repeats, the dispatch between the
// two forms (by a sequence's own length; TF_DELTA_RULE=recurrent or chunked) and refused geometry;
// and the recurrent form's packed prompts at the released heads, its every key head dim and the
// edges of its staging chunks.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/delta_rule/gated_delta_rule.h"
#include "backend/variants.h"
#include "check/contract/gates.h"
#include "check/contract/inputs.h"
#include "check/contract/kernel_contract.h"
#include "check/contract/kernels/references.h"
#include "check/contract/kernels/gated_delta_rule_model.h"
#include "core/bf16.h"
#include "core/error.h"
#include "cuda_test_util.h"

namespace tf {
namespace {

using contract::Case;

struct Geometry {
  int64_t hk, dk, hv, dv;
  SeqOffsets seqs;
};

Case make(uint64_t seed, const Geometry& g) {
  contract::Rng rng(seed);
  return contract::gdr_random_case(rng, g.seqs.back(), g.hk, g.dk, g.hv, g.dv, g.seqs);
}

std::vector<Tensor> on_gpu(const std::vector<Tensor>& in) {
  std::vector<Tensor> d;
  for (const Tensor& t : in) d.push_back(to_device(t, Device::CUDA));
  return d;
}

// The op on the GPU from a case's host inputs; the output back on the host.
Tensor run_gpu(const Case& c, bool chunked, const SeqOffsets& seqs) {
  std::vector<Tensor> d = on_gpu(c.inputs);
  Tensor o = empty(DType::BF16, c.outputs[0].shape, Device::CUDA);
  if (chunked) gated_delta_rule_chunked(d[0], d[1], d[2], d[3], d[4], seqs, o);
  else gated_delta_rule(d[0], d[1], d[2], d[3], d[4], seqs, o);
  return to_device(o, Device::CPU);
}
Tensor run_gpu(const Case& c, bool chunked) { return run_gpu(c, chunked, contract::offsets_from(c.params, 0)); }

// The recurrence in float64, straight from backend/gated_delta_rule.h.
std::vector<double> recurrence_f64(const Case& c) {
  const int64_t T = c.inputs[0].dim(0), Hk = c.inputs[0].dim(1), dk = c.inputs[0].dim(2), Hv = c.inputs[2].dim(1),
                dv = c.inputs[2].dim(2);
  SeqOffsets o = contract::offsets_from(c.params, 0);
  std::vector<double> q = contract::values_of(c.inputs[0]), k = contract::values_of(c.inputs[1]),
                      v = contract::values_of(c.inputs[2]), beta = contract::values_of(c.inputs[3]),
                      g = contract::values_of(c.inputs[4]), y(T * Hv * dv);
  for (size_t s = 0; s + 1 < o.size(); ++s)
    for (int64_t h = 0; h < Hv; ++h) {
      const int64_t hk = h / (Hv / Hk);
      std::vector<double> S(dk * dv, 0.0);
      for (int64_t t = o[s]; t < o[s + 1]; ++t) {
        const double* kt = &k[(t * Hk + hk) * dk];
        const double* qt = &q[(t * Hk + hk) * dk];
        const double decay = std::exp(g[t * Hv + h]), bt = beta[t * Hv + h];
        for (double& x : S) x *= decay;
        for (int64_t j = 0; j < dv; ++j) {
          double kv = 0;
          for (int64_t i = 0; i < dk; ++i) kv += S[i * dv + j] * kt[i];
          const double d = (v[(t * Hv + h) * dv + j] - kv) * bt;
          double out = 0;
          for (int64_t i = 0; i < dk; ++i) out += (S[i * dv + j] += kt[i] * d) * qt[i];
          y[(t * Hv + h) * dv + j] = out;
        }
      }
    }
  return y;
}

// The worst output's distance from the float64 recurrence, in units of half a bf16 step of the
// reference plus an fp32 working error well below that: 1 or less passes.
double worst_against_float64(const Case& c, const Tensor& o) {
  std::vector<double> ref = recurrence_f64(c), got = contract::values_of(o);
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    worst = std::fmax(worst, std::fabs(got[i] - ref[i]) / (std::fabs(ref[i]) * 0x1p-8 + 1e-5));
  return worst;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data, b.data, a.nbytes()) == 0;
}

const std::vector<Geometry>& geometries() {
  static const std::vector<Geometry> g = {
      {1, 128, 2, 128, {0, 300}},               // released head dims, Hv = 2 Hk, a partial last chunk
      {16, 128, 32, 128, {0, 64}},              // released heads, one whole chunk
      {1, 128, 2, 128, {0, 1, 65, 65, 192}},    // packed: a 1-token sequence, one chunk, an empty one, two chunks
      {2, 32, 4, 40, {0, 63, 190}},             // dv across a 32-column slice, a partial first chunk
      {1, 50, 1, 7, {0, 129}},                  // dims that are no multiple of 4
  };
  return g;
}

TEST(CudaDeltaChunked, MatchesFloat64Recurrence) {
  TF_REQUIRE_CUDA_GPU();
  for (const Geometry& g : geometries()) {
    Case c = make(11, g);
    EXPECT_LE(worst_against_float64(c, run_gpu(c, true)), 1.0) << c.label;
  }
}

TEST(CudaDeltaChunked, WithinTheRecurrentContractAllowance) {
  TF_REQUIRE_CUDA_GPU();
  const contract::KernelContract& model = contract::registered_kernel("gated_delta_rule");
  for (const Geometry& g : geometries()) {
    Case c = make(12, g);
    std::vector<Tensor> out = {run_gpu(c, true)};
    contract::Comparison cmp = contract::compare(out, model.reference(c), contract::Poison::QuietNaN);
    EXPECT_TRUE(cmp.ok()) << c.label << ": " << cmp.describe();
  }
}

TEST(CudaDeltaChunked, RepeatsByteForByte) {
  TF_REQUIRE_CUDA_GPU();
  for (const Geometry& g : geometries()) {
    Case c = make(13, g);
    EXPECT_TRUE(same_bytes(run_gpu(c, true), run_gpu(c, true))) << c.label;
  }
}

// A long sequence takes the chunked form, alone or packed with a short one, and a short one keeps
// the recurrence: each sequence's bytes depend on itself only.
TEST(CudaDeltaChunked, DispatchByOwnLength) {
  TF_REQUIRE_CUDA_GPU();
  variants::Override by_length(Variant::delta_rule, "auto");
  const int64_t n_short = 50, n_long = kDeltaRuleChunkedFrom + 44;
  Case packed = make(14, {1, 128, 2, 128, {0, n_short, n_short + n_long}});
  Tensor both = run_gpu(packed, false);
  auto alone = [&](int64_t a, int64_t b, bool chunked) {
    Case c = packed;
    for (Tensor& t : c.inputs) t = t.rows(a, b);
    c.outputs = {empty(DType::BF16, {b - a, 2, 128})};
    return run_gpu(c, chunked, {0, b - a});
  };
  const int64_t T = n_short + n_long;
  EXPECT_TRUE(same_bytes(both.rows(0, n_short), alone(0, n_short, false)));
  EXPECT_TRUE(same_bytes(both.rows(n_short, T), alone(n_short, T, false)));
  EXPECT_TRUE(same_bytes(both.rows(n_short, T), alone(n_short, T, true)));

  auto on_form = [&](const char* form) {
    variants::Override one_form(Variant::delta_rule, form);
    return run_gpu(packed, false);
  };
  Tensor forced = on_form("recurrent");
  EXPECT_TRUE(same_bytes(forced.rows(0, n_short), both.rows(0, n_short)));
  EXPECT_FALSE(same_bytes(forced.rows(n_short, T), both.rows(n_short, T)))
      << "TF_DELTA_RULE=recurrent should leave the long sequence on the recurrence";
  Tensor all_chunked = on_form("chunked");
  EXPECT_TRUE(same_bytes(all_chunked.rows(n_short, T), both.rows(n_short, T)));
  EXPECT_FALSE(same_bytes(all_chunked.rows(0, n_short), both.rows(0, n_short)))
      << "TF_DELTA_RULE=chunked should put the short sequence on the chunked form";
  EXPECT_THROW(on_form("fastest"), Error);
}

// The recurrent form at the released heads: packed prompts run one after another in each block
// (one prompt's warps already fill the schedulers); each prompt's bytes are its bytes alone, every
// layout within the contract's allowance for the fp32 recurrence.
TEST(CudaDeltaRecurrent, PackedPromptsGiveTheirBytesAlone) {
  TF_REQUIRE_CUDA_GPU();
  variants::Override by_length(Variant::delta_rule, "auto");
  const SeqOffsets offs = {0, 75, 85, 88};
  Case packed = make(16, {16, 128, 32, 128, offs});
  const contract::KernelContract& model = contract::registered_kernel("gated_delta_rule");
  const auto want = model.reference(packed);
  for (const char* layout : {"32x1", "16x1", "16x2"}) {
    variants::Override lanes(Variant::recurrence_layout, layout);
    Tensor both = run_gpu(packed, false);
    contract::Comparison cmp = contract::compare({both}, want, contract::Poison::QuietNaN);
    EXPECT_TRUE(cmp.ok()) << layout << ": " << cmp.describe();
    for (size_t s = 0; s + 1 < offs.size(); ++s) {
      Case c = packed;
      for (Tensor& t : c.inputs) t = t.rows(offs[s], offs[s + 1]);
      c.outputs = {empty(DType::BF16, {offs[s + 1] - offs[s], 32, 128})};
      EXPECT_TRUE(same_bytes(both.rows(offs[s], offs[s + 1]), run_gpu(c, false, {0, offs[s + 1] - offs[s]})))
          << layout << ", prompt " << s;
    }
  }
  EXPECT_THROW(variants::Override(Variant::recurrence_layout, "32x2"), Error);
}

// The recurrent form at every key head dim its kernels cover, whole row groups or not (rows past dk
// must read as zeros, not as the staged q row after them), within the contract's allowance.
TEST(CudaDeltaRecurrent, EveryKeyHeadDimWithinTheContract) {
  TF_REQUIRE_CUDA_GPU();
  variants::Override recurrent(Variant::delta_rule, "recurrent");
  const contract::KernelContract& model = contract::registered_kernel("gated_delta_rule");
  for (int64_t dk : {5, 8, 20, 32, 48, 64, 100, 128, 160, 256}) {
    Case c = make(40 + uint64_t(dk), {2, dk, 4, 24, {0, 19, 30}});
    contract::Comparison cmp = contract::compare({run_gpu(c, false)}, model.reference(c), contract::Poison::QuietNaN);
    EXPECT_TRUE(cmp.ok()) << "dk " << dk << ": " << cmp.describe();
  }
}

// The recurrent form at the released key head dim around every edge of its eight-token staging
// chunks, packed, with weak, typical and strong decays: within the contract's allowance for the
// fp32 recurrence and close to the float64 recurrence, each prompt's bytes its own.
TEST(CudaDeltaRecurrent, WithinTheContractAtEveryStagingChunkEdge) {
  TF_REQUIRE_CUDA_GPU();
  variants::Override by_length(Variant::delta_rule, "auto");
  variants::Override lanes(Variant::recurrence_layout, "32x1");
  const contract::KernelContract& model = contract::registered_kernel("gated_delta_rule");
  const SeqOffsets offs = {0, 1, 8, 16, 25, 40, 56, 73, 148, 275};  // 1, 7, 8, 9, 15, 16, 17, 75, 127 tokens
  for (float decay_scale : {1.0f, 8.0f, 0.01f}) {
    Case c = make(60, {2, 128, 4, 128, offs});
    for (int64_t i = 0; i < c.inputs[4].numel(); ++i) c.inputs[4].ptr<float>()[i] *= decay_scale;
    Tensor o = run_gpu(c, false);
    contract::Comparison cmp = contract::compare({o}, model.reference(c), contract::Poison::QuietNaN);
    EXPECT_TRUE(cmp.ok()) << "decays x " << decay_scale << ": " << cmp.describe();
    EXPECT_LE(worst_against_float64(c, o), 1.0) << "decays x " << decay_scale;
    Case alone = c;
    for (Tensor& t : alone.inputs) t = t.rows(offs[7], offs[8]);
    alone.outputs = {empty(DType::BF16, {offs[8] - offs[7], 4, 128})};
    EXPECT_TRUE(same_bytes(o.rows(offs[7], offs[8]), run_gpu(alone, false, {0, offs[8] - offs[7]})))
        << "the 75-token prompt alone, decays x " << decay_scale;
  }
}

TEST(CudaDeltaChunked, RefusesHeadDimsPast128ByName) {
  TF_REQUIRE_CUDA_GPU();
  Case c = make(15, {1, 160, 1, 16, {0, 70}});
  try {
    run_gpu(c, true);
    FAIL() << "dk 160 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gated_delta_rule_chunked"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("up to 128"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tf
