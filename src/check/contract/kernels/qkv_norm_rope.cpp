// qkv_norm_rope: a fused q|k|v product's rows split per head; q and k each through the plain
// per-head RMSNorm, n = bf16(bf16(x r) w), then RoPE row t (per-token tables); v copied.
#include "backend/attention/qkv_norm_rope.h"
#include "backend/rope/rope_tables.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// params: eps. inputs: qkv [T, 3 H d], q_norm, k_norm [d], cos, sin [T, d / 2]. outputs: q, k, v.
Case make_case(Rng& rng, int64_t T, int64_t H, int64_t d, double sigma) {
  Case c;
  c.label = label({{"tokens", T}, {"heads", H}, {"head_dim", d}});
  RopeTables tables = make_rope_tables(T, d, 1e4);
  c.inputs = {random_normal(rng, DType::BF16, {T, 3 * H * d}, sigma), random_normal(rng, DType::BF16, {d}),
              random_normal(rng, DType::BF16, {d}), tables.cos, tables.sin};
  for (int i = 0; i < 3; ++i) c.outputs.push_back(host_empty(DType::BF16, {T, H, d}));
  c.params = {1e-6};
  return c;
}

// Rows of part p (0 q, 1 k, 2 v) of qkv as [T * H, d].
std::vector<Tracked> part_of(const std::vector<Tracked>& qkv, int64_t T, int64_t D, int p) {
  std::vector<Tracked> out(static_cast<size_t>(T * D));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < D; ++i) out[t * D + i] = qkv[(3 * t + p) * D + i];
  return out;
}

Reference reference(const Case& c) {
  const int64_t T = c.outputs[0].dim(0), H = c.outputs[0].dim(1), d = c.outputs[0].dim(2), half = c.inputs[3].dim(1);
  const std::vector<Tracked> qkv = tracked_of(c.inputs[0]), cs = tracked_of(c.inputs[3]), sn = tracked_of(c.inputs[4]);
  Reference r;
  for (int p = 0; p < 2; ++p) {
    const std::vector<Tracked> n =
        rms_norm_plain_reference(part_of(qkv, T, H * d, p), tracked_of(c.inputs[1 + p]), d, c.params[0]);
    r.push_back(rope_reference(n, H, d, cs, sn, half, single_sequence(T)));
  }
  r.push_back(part_of(qkv, T, H * d, 2));
  return r;
}

void run(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  qkv_norm_rope(in[0], in[1], in[2], static_cast<float>(p[0]), {in[3], in[4]}, out[0], out[1], out[2]);
}

}  // namespace

void register_qkv_norm_rope(bool cuda) {
  KernelContract k;
  k.name = "qkv_norm_rope";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    // CUDA's one-launch kernel (d 64, 128) and its steps (d 32: RoPE pairs across lanes)
    return std::vector<Case>{make_case(rng, 37, 2, 128, 1.0), make_case(rng, 20, 3, 64, 1.0), make_case(rng, 9, 2, 32, 1.0)};
  };
  k.adversarial_cases = [](Rng& rng) {
    // rows of ~1e4 and ~1e-4: the norm's sums at both ends of the range
    return std::vector<Case>{make_case(rng, 5, 2, 128, 1e4), make_case(rng, 5, 2, 64, 1e-4)};
  };
  k.reference = reference;
  k.run = run;
  k.controls = {
      perturbed_inputs("q-and-k-norms-swapped", [](std::vector<Tensor>& in) { std::swap(in[1], in[2]); }),
      perturbed_inputs("sin-negated", [](std::vector<Tensor>& in) { map_values(in[4], [](double s) { return -s; }); }),
      perturbed_params("dropped-eps", [](Params& p) { p[0] = 1; }),
      reimplemented("k-read-as-v", [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
        run(in, out, p);
        std::vector<double> qkv = values_of(in[0]), k(static_cast<size_t>(out[1].numel()));
        const int64_t T = out[1].dim(0), D = out[1].dim(1) * out[1].dim(2);
        for (int64_t t = 0; t < T; ++t)
          for (int64_t i = 0; i < D; ++i) k[t * D + i] = qkv[(3 * t + 1) * D + i];
        set_values(out[2], k);
      }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = label({{"tokens", 8392}, {"heads", 24}, {"head_dim", 128}});
    c.inputs = {shape_only(DType::BF16, {8392, 9216}), shape_only(DType::BF16, {128}), shape_only(DType::BF16, {128}),
                shape_only(DType::BF16, {8392, 64}), shape_only(DType::BF16, {8392, 64})};
    for (int i = 0; i < 3; ++i) c.outputs.push_back(shape_only(DType::BF16, {8392, 24, 128}));
    c.params = {1e-6};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
