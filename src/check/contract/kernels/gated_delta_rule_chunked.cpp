// gated_delta_rule_chunked: the same op in the chunked (WY) form, judged by the recurrent form's
// rounding model (one op, one allowance). Its cases span several chunks, partial last chunks and
// packed sequences; its controls add the chunked form's own faults to the recurrence's.
#include <cmath>

#include "backend/delta_rule/gated_delta_rule.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"
#include "check/contract/kernels/gated_delta_rule_model.h"

namespace tf::contract {

namespace {

enum class ChunkFault { StateResetPerChunk, NoChunkDecayOfState, NoWyCorrection, PartialChunkDropped };

// The chunked form in float64 with one planted fault.
void faulty_chunked(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, ChunkFault fault) {
  const int64_t T = in[0].dim(0), Hk = in[0].dim(1), dk = in[0].dim(2), Hv = in[2].dim(1), dv = in[2].dim(2);
  const int64_t C = kDeltaRuleChunk;
  SeqOffsets o = offsets_from(p, 0);
  std::vector<double> q = values_of(in[0]), k = values_of(in[1]), v = values_of(in[2]), beta = values_of(in[3]),
                      g = values_of(in[4]), y(static_cast<size_t>(T * Hv * dv), 0.0);
  for (size_t s = 0; s + 1 < o.size(); ++s)
    for (int64_t h = 0; h < Hv; ++h) {
      const int64_t hk = h / (Hv / Hk);
      std::vector<double> S(dk * dv, 0.0);
      for (int64_t c0 = o[s]; c0 < o[s + 1]; c0 += C) {
        const int64_t n = std::min(C, o[s + 1] - c0);
        if (fault == ChunkFault::PartialChunkDropped && n < C) break;
        if (fault == ChunkFault::StateResetPerChunk) std::fill(S.begin(), S.end(), 0.0);
        auto kp = [&](int64_t i) { return k.data() + ((c0 + i) * Hk + hk) * dk; };
        auto qp = [&](int64_t i) { return q.data() + ((c0 + i) * Hk + hk) * dk; };
        auto dot = [&](const double* a, const double* b) {
          double r = 0;
          for (int64_t x = 0; x < dk; ++x) r += a[x] * b[x];
          return r;
        };
        std::vector<double> G(n), d(n * dv), kk(n * n), qk(n * n);
        for (int64_t i = 0; i < n; ++i) G[i] = (i ? G[i - 1] : 0.0) + g[(c0 + i) * Hv + h];
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) kk[i * n + j] = dot(kp(i), kp(j)), qk[i * n + j] = dot(qp(i), kp(j));
        // d = (I + L)^-1 (beta v - beta exp(G) K S) by forward substitution.
        for (int64_t i = 0; i < n; ++i) {
          const double bi = beta[(c0 + i) * Hv + h];
          for (int64_t c = 0; c < dv; ++c) {
            double ks = 0;
            for (int64_t x = 0; x < dk; ++x) ks += kp(i)[x] * S[x * dv + c];
            double r = bi * (v[((c0 + i) * Hv + h) * dv + c] - std::exp(G[i]) * ks);
            if (fault != ChunkFault::NoWyCorrection)
              for (int64_t j = 0; j < i; ++j) r -= bi * kk[i * n + j] * std::exp(G[i] - G[j]) * d[j * dv + c];
            d[i * dv + c] = r;
          }
        }
        for (int64_t i = 0; i < n; ++i)
          for (int64_t c = 0; c < dv; ++c) {
            double qs = 0;
            for (int64_t x = 0; x < dk; ++x) qs += qp(i)[x] * S[x * dv + c];
            double acc = std::exp(G[i]) * qs;
            for (int64_t j = 0; j <= i; ++j) acc += qk[i * n + j] * std::exp(G[i] - G[j]) * d[j * dv + c];
            y[((c0 + i) * Hv + h) * dv + c] = acc;
          }
        const double carry = fault == ChunkFault::NoChunkDecayOfState ? 1.0 : std::exp(G[n - 1]);
        for (int64_t x = 0; x < dk; ++x)
          for (int64_t c = 0; c < dv; ++c) {
            double acc = carry * S[x * dv + c];
            for (int64_t j = 0; j < n; ++j) acc += kp(j)[x] * std::exp(G[n - 1] - G[j]) * d[j * dv + c];
            S[x * dv + c] = acc;
          }
      }
    }
  set_values(out[0], y);
}

HostKernel with(ChunkFault fault) {
  return [fault](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    faulty_chunked(in, out, p, fault);
  };
}

}  // namespace

void register_gated_delta_rule_chunked(bool cuda) {
  KernelContract k;
  k.name = "gated_delta_rule_chunked";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{
        gdr_random_case(rng, 200, 1, 128, 2, 128, {0, 200}),         // the released head dims, a partial last chunk
        gdr_random_case(rng, 190, 2, 32, 4, 16, {0, 64, 190}),       // packed: one whole chunk, then two chunks
        gdr_random_case(rng, 131, 1, 16, 2, 40, {0, 0, 1, 131}),     // empty and one-token sequences; dv past a slice
        gdr_random_case(rng, 129, 1, 50, 1, 7, {0, 129}),            // dims that are no multiple of 4
    };
  };
  k.adversarial_cases = [](Rng& rng) {
    std::vector<Case> cs = gdr_adversarial_cases(rng);
    // Decay exp(-95) per token across chunk boundaries: the carried state underflows.
    Case decay = gdr_random_case(rng, 150, 1, 32, 1, 16, {0, 150});
    map_values(decay.inputs[4], [](double) { return -95.0; });
    decay.label = "decay exp(-95) " + decay.label;
    cs.push_back(decay);
    // No decay at all: the whole chunk's keys interact at full weight.
    Case flat = gdr_random_case(rng, 200, 1, 32, 1, 16, {0, 200});
    map_values(flat.inputs[4], [](double) { return 0.0; });
    flat.label = "no decay " + flat.label;
    cs.push_back(flat);
    return cs;
  };
  k.reference = gdr_reference;
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    gated_delta_rule_chunked(in[0], in[1], in[2], in[3], in[4], offsets_from(p, 0), out[0]);
  };
  k.controls = gdr_controls();
  k.controls.push_back(reimplemented("state-reset-per-chunk", with(ChunkFault::StateResetPerChunk)));
  k.controls.push_back(reimplemented("no-chunk-decay-of-state", with(ChunkFault::NoChunkDecayOfState)));
  k.controls.push_back(reimplemented("no-wy-correction", with(ChunkFault::NoWyCorrection)));
  k.controls.push_back(reimplemented("partial-chunk-dropped", with(ChunkFault::PartialChunkDropped)));
  k.controls.push_back(perturbed_params("sequences-merged", [](Params& p) { p = {p.front(), p.back()}; }));
  k.limit_cases = gdr_limit_cases;
  add_kernel(std::move(k));
}

}  // namespace tf::contract
