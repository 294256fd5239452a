// causal_conv1d_silu_delta_net_prep: the conv's contract (causal_conv1d_silu.cpp) feeding the prep's
// (delta_net_prep.cpp); the conv's bf16 output is a rounding point even though no tensor holds it.
#include "backend/conv/causal_conv1d_silu.h"
#include "backend/delta_rule/causal_conv1d_silu_delta_net_prep.h"
#include "backend/delta_rule/delta_net_prep.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// inputs: x, w, b, a, A_log, dt_bias; outputs q, k, v, beta, g; params: offsets.
Case make_case(Rng& rng, const SeqOffsets& o, int64_t hk, int64_t dk, int64_t hv, int64_t dv, int64_t K) {
  const int64_t T = o.back(), C = 2 * hk * dk + hv * dv;
  Case c;
  c.label = label({{"tokens", T}, {"key_heads", hk}, {"dk", dk}, {"value_heads", hv}, {"dv", dv}, {"k", K}}) + " " +
            offsets_label(o);
  std::vector<double> alog(hv), dt(hv);
  for (int64_t h = 0; h < hv; ++h) {
    alog[h] = std::log(rng.uniform(1, 16));
    dt[h] = rng.normal();
  }
  c.inputs = {random_normal(rng, DType::BF16, {T, C}), random_normal(rng, DType::BF16, {C, 1, K}, 0.5),
              random_normal(rng, DType::BF16, {T, hv}, 3.0), random_normal(rng, DType::BF16, {T, hv}, 8.0),
              host_tensor(DType::F32, {hv}, alog), host_tensor(DType::F32, {hv}, dt)};
  c.outputs = {host_empty(DType::F32, {T, hk, dk}), host_empty(DType::F32, {T, hk, dk}), host_empty(DType::F32, {T, hv, dv}),
               host_empty(DType::F32, {T, hv}), host_empty(DType::F32, {T, hv})};
  append_offsets(c.params, o);
  return c;
}

Reference reference(const Case& c) {
  const int64_t hk = c.outputs[0].dim(1), dk = c.outputs[0].dim(2), hv = c.outputs[2].dim(1), dv = c.outputs[2].dim(2);
  std::vector<Tracked> conv = causal_conv1d_silu_reference(tracked_of(c.inputs[0]), tracked_of(c.inputs[1]),
                                                           c.inputs[0].dim(1), c.inputs[1].dim(2), offsets_from(c.params, 0));
  return delta_net_prep_reference(conv, tracked_of(c.inputs[2]), tracked_of(c.inputs[3]), tracked_of(c.inputs[4]),
                                  tracked_of(c.inputs[5]), hk, dk, hv, dv);
}

// The two steps on the CPU with a fault planted: the conv over offsets `conv_offsets` (all one
// sequence: packed prompts leak), or no conv at all (the prep reads the in-projection's rows).
void two_steps(const std::vector<Tensor>& in, std::vector<Tensor>& out, const SeqOffsets* conv_offsets) {
  Tensor conv = host_empty(DType::BF16, in[0].shape);
  if (conv_offsets) causal_conv1d_silu(in[0], in[1], *conv_offsets, conv);
  delta_net_prep(conv_offsets ? conv : in[0], in[2], in[3], in[4], in[5], out[0], out[1], out[2], out[3], out[4]);
}

}  // namespace

void register_causal_conv1d_silu_delta_net_prep(bool cuda) {
  KernelContract k;
  k.name = "causal_conv1d_silu_delta_net_prep";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{make_case(rng, {0, 37, 37, 70}, 2, 32, 4, 16, 4), make_case(rng, {0, 3}, 1, 64, 2, 32, 4),
                             make_case(rng, {0, 20, 41}, 2, 16, 2, 8, 3), make_case(rng, {0, 9}, 4, 128, 8, 128, 4)};
  };
  k.reference = reference;
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    causal_conv1d_silu_delta_net_prep(in[0], in[1], offsets_from(p, 0), in[2], in[3], in[4], in[5], out[0], out[1],
                                      out[2], out[3], out[4]);
  };
  k.controls = {
      reimplemented("sequences-leak", [](auto& in, auto& out, auto&) {
        const SeqOffsets one = single_sequence(in[0].dim(0));
        two_steps(in, out, &one);
      }),
      reimplemented("conv-skipped", [](auto& in, auto& out, auto&) { two_steps(in, out, nullptr); }),
      perturbed_inputs("bf16-decay-parameters", [](std::vector<Tensor>& in) { map_values(in[4], bf16_of); map_values(in[5], bf16_of); }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = "tokens=4096 released DeltaNet geometry";
    c.inputs = {shape_only(DType::BF16, {4096, 8192}), shape_only(DType::BF16, {8192, 1, 4}),
                shape_only(DType::BF16, {4096, 32}), shape_only(DType::BF16, {4096, 32}), shape_only(DType::F32, {32}),
                shape_only(DType::F32, {32})};
    c.outputs = {shape_only(DType::F32, {4096, 16, 128}), shape_only(DType::F32, {4096, 16, 128}), shape_only(DType::F32, {4096, 32, 128}),
                 shape_only(DType::F32, {4096, 32}), shape_only(DType::F32, {4096, 32})};
    append_offsets(c.params, single_sequence(4096));
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
