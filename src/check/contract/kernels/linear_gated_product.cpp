// linear_gated_product: gate = bf16(sum_k x w_gate), up = bf16(sum_k x w_up) (linear's contract), then
// silu: y = bf16(bf16(silu(gate)) * up) (silu_gated_product's); situ: situ_gated_product(up, gate)'s steps.
// gate and up are rounding points though no tensor may hold them.
#include "backend/linear/linear_gated_product.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// inputs: x [n, k], w_gate [o, k], w_up [o, k]; output y [n, o].
Case random_case(Rng& rng, int64_t n, int64_t k, int64_t o) {
  Case c;
  c.label = label({{"tokens", n}, {"in", k}, {"out", o}});
  const double w_sigma = 2 / std::sqrt(static_cast<double>(k));
  c.inputs = {random_normal(rng, DType::BF16, {n, k}), random_normal(rng, DType::BF16, {o, k}, w_sigma),
              random_normal(rng, DType::BF16, {o, k}, w_sigma)};
  c.outputs = {host_empty(DType::BF16, {n, o})};
  return c;
}

Reference reference(const Case& c, GatedActivation act) {
  const int64_t n = c.inputs[0].dim(0), k = c.inputs[0].dim(1), o = c.inputs[1].dim(0);
  std::vector<Tracked> x = tracked_of(c.inputs[0]), wg = tracked_of(c.inputs[1]), wu = tracked_of(c.inputs[2]),
                       y(static_cast<size_t>(n * o));
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < o; ++j) {
      auto xs = std::span(x).subspan(t * k, k);
      Tracked gate = round_bf16_point(f32_dot(xs, std::span(wg).subspan(j * k, k)));
      Tracked up = round_bf16_point(f32_dot(xs, std::span(wu).subspan(j * k, k)));
      y[t * o + j] = act == GatedActivation::silu ? round_bf16_point(f32_mul(round_bf16_point(f32_silu(gate)), up))
                                                  : situ_reference(up, gate);
    }
  return {y};
}

// The op on the host with a fault: `swapped` gates up by silu(gate) the other way round,
// `unrounded_gate` applies silu to the fp32 sum (gate's rounding point dropped).
// situ: SiTU on faulty products (u, g as the flags leave them).
void faulty(const std::vector<Tensor>& in, std::vector<Tensor>& out, GatedActivation act, bool swapped,
            bool unrounded_gate) {
  const int64_t n = in[0].dim(0), k = in[0].dim(1), o = in[1].dim(0);
  std::vector<double> x = values_of(in[0]), wg = values_of(in[1]), wu = values_of(in[2]), y(static_cast<size_t>(n * o));
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < o; ++j) {
      float g = 0, u = 0;
      for (int64_t i = 0; i < k; ++i) {
        g += static_cast<float>(x[t * k + i]) * static_cast<float>(wg[j * k + i]);
        u += static_cast<float>(x[t * k + i]) * static_cast<float>(wu[j * k + i]);
      }
      if (!unrounded_gate) g = static_cast<float>(bf16_of(g));
      u = static_cast<float>(bf16_of(u));
      if (swapped) std::swap(g, u);
      y[t * o + j] = act == GatedActivation::silu ? bf16_of(g / (1 + std::exp(-g))) * u : situ_faulty(u, g, 0);
    }
  set_values(out[0], y);
}

}  // namespace

void register_linear_gated_product(bool cuda) {
  for (GatedActivation act : {GatedActivation::silu, GatedActivation::situ}) {
    const bool silu = act == GatedActivation::silu;
    KernelContract k;
    k.name = silu ? "linear_gated_product (silu)" : "linear_gated_product (situ)";
    k.families = {"moss_image"};
    k.backends = backends(cuda);
    k.random_cases = [silu](Rng& rng) {
      // CUDA, silu: 256 inputs keep one k share, so the streaming kernel's gated epilogue makes y (a
      // partial weight tile at 200 outputs); 2048 inputs, 130 outputs (not in eights) and 130 rows take
      // the two products and the elementwise kernel. situ: 200 and 300 rows (above 128) with 136 and 264
      // outputs reach the wgmma kernel's epilogue (TF_LINEAR_EPILOGUE=fused) with partial row and column tiles.
      if (silu)
        return std::vector<Case>{random_case(rng, 1, 256, 200), random_case(rng, 75, 256, 256),
                                 random_case(rng, 9, 2048, 130), random_case(rng, 130, 64, 40), random_case(rng, 5, 256, 6)};
      return std::vector<Case>{random_case(rng, 5, 256, 40), random_case(rng, 200, 128, 136),
                               random_case(rng, 300, 192, 264)};
    };
    k.reference = [act](const Case& c) { return reference(c, act); };
    k.run = [act](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) {
      // the weights side by side, up after gate, as the encoder's upload lays them out
      const int64_t o = in[1].dim(0);
      Tensor both = empty(DType::BF16, {2 * o, in[1].dim(1)}, in[1].device);
      Tensor gate = both.rows(0, o), up = both.rows(o, 2 * o);
      copy_into(gate, in[1]);
      copy_into(up, in[2]);
      linear_gated_product(in[0], gate, up, act, out[0]);
    };
    k.controls = {
        reimplemented("gate-and-up-swapped", [act](auto& in, auto& out, auto&) { faulty(in, out, act, true, false); }),
        reimplemented("unrounded-gate", [act](auto& in, auto& out, auto&) { faulty(in, out, act, false, true); }),
    };
    k.limit_cases = [silu] {
      Case c;
      const int64_t n = silu ? 128 : 4224, kk = silu ? 4096 : 3072, o = silu ? 12288 : 8192;
      c.label = silu ? "tokens=128 released MLP 4096 -> 12288" : "tokens=4224 MOSS-Image FFN 3072 -> 8192";
      c.inputs = {shape_only(DType::BF16, {n, kk}), shape_only(DType::BF16, {o, kk}), shape_only(DType::BF16, {o, kk})};
      c.outputs = {shape_only(DType::BF16, {n, o})};
      return std::vector<Case>{c};
    };
    add_kernel(std::move(k));
  }
}

}  // namespace tf::contract
