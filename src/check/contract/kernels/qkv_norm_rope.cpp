// qkv_norm_rope: a fused q|k|v product's rows split per head; q and k each through the plain
// per-head RMSNorm and split-half RoPE over the whole head from fp32 per-token tables, in fp32 with one
// rounding: n = (x r) w, y = bf16(n c + rot s); v copied.
#include <cmath>

#include "backend/attention/qkv_norm_rope.h"
#include "backend/norm/rms_norm.h"
#include "backend/rope/rope.h"
#include "backend/rope/rope_tables.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// params: eps. inputs: qkv [T, 3 H d], q_norm, k_norm [d], cos, sin F32 [T, d / 2] (MOSS-Image's
// four axes of d / 8 bands where d allows, else one axis; positions up to `reach`). outputs: q, k, v.
Case make_case(Rng& rng, int64_t T, int64_t H, int64_t d, double sigma, double reach = 64) {
  Case c;
  c.label = label({{"tokens", T}, {"heads", H}, {"head_dim", d}});
  const int64_t A = d % 8 == 0 ? 4 : 1, B = d / 2 / A;
  Tensor positions = empty(DType::F32, {T, A}), bands = empty(DType::F32, {B});
  for (int64_t i = 0; i < T * A; ++i)
    positions.ptr<float>()[i] = static_cast<float>(std::round(2 * reach * (rng.uniform() - 0.5)) / 2);
  for (int64_t j = 0; j < B; ++j)
    bands.ptr<float>()[j] = static_cast<float>(std::pow(1e4, -static_cast<double>(j) / static_cast<double>(B)));
  RopeTables tables = make_rope_tables(positions, bands);
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
  const int64_t T = c.outputs[0].dim(0), H = c.outputs[0].dim(1), d = c.outputs[0].dim(2), half = d / 2;
  const std::vector<Tracked> qkv = tracked_of(c.inputs[0]), cs = tracked_of(c.inputs[3]), sn = tracked_of(c.inputs[4]);
  Reference r;
  std::vector<Tracked> sq(static_cast<size_t>(d)), n(static_cast<size_t>(d));
  for (int p = 0; p < 2; ++p) {
    const std::vector<Tracked> x = part_of(qkv, T, H * d, p), w = tracked_of(c.inputs[1 + p]);
    std::vector<Tracked> y(x.size());
    for (int64_t row = 0; row < T * H; ++row) {
      const Tracked inv = inv_rms_reference(x, row, d, c.params[0], sq);
      for (int64_t i = 0; i < d; ++i) n[i] = f32_mul(f32_mul(x[row * d + i], inv), w[i]);
      const int64_t t = row / H;
      for (int64_t i = 0; i < d; ++i) {
        const Tracked rot = i < half ? f32_neg(n[i + half]) : n[i - half];
        y[row * d + i] = round_bf16_point(
            f32_add(f32_mul(n[i], cs[t * half + i % half]), f32_mul(rot, sn[t * half + i % half])));
      }
    }
    r.push_back(std::move(y));
  }
  r.push_back(part_of(qkv, T, H * d, 2));
  return r;
}

// The official eager form, each step rounded to bf16: n = bf16(bf16(x r) w), the tables in bf16, then
// bf16(bf16(n c) + bf16(rot s)) (rms_norm plain and rope's own kernels on the CPU).
void rounded_steps(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  const int64_t T = out[0].dim(0), H = out[0].dim(1), d = out[0].dim(2);
  std::vector<double> qkv = values_of(in[0]);
  RopeTables bf{host_empty(DType::BF16, in[3].shape), host_empty(DType::BF16, in[4].shape)};
  set_values(bf.cos, values_of(in[3]));
  set_values(bf.sin, values_of(in[4]));
  for (int part = 0; part < 3; ++part) {
    std::vector<double> rows(static_cast<size_t>(T * H * d));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < H * d; ++i) rows[t * H * d + i] = qkv[(3 * t + part) * H * d + i];
    set_values(out[part], rows);
    if (part == 2) continue;
    Tensor flat = out[part].reshaped({T * H, d});
    rms_norm(flat, in[1 + part], {.weight = NormWeight::plain, .eps = static_cast<float>(p[0])}, flat);
    rope(out[part], bf, RopePositions::per_token(T), out[part]);
  }
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
    // CUDA's half-warp kernel (d 128) and its warp-a-row kernel (d 64, 24: one axis of 6 bands)
    return std::vector<Case>{make_case(rng, 37, 2, 128, 1.0), make_case(rng, 20, 3, 64, 1.0), make_case(rng, 9, 2, 24, 1.0)};
  };
  k.adversarial_cases = [](Rng& rng) {
    // rows of ~1e4 and ~1e-4: the norm's sums at both ends of the range; positions to 4096 (large phases)
    return std::vector<Case>{make_case(rng, 5, 2, 128, 1e4), make_case(rng, 5, 2, 64, 1e-4),
                             make_case(rng, 6, 2, 128, 1.0, 8192)};
  };
  k.reference = reference;
  k.run = run;
  k.controls = {
      reimplemented("rounded-steps", rounded_steps),
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
                shape_only(DType::F32, {8392, 64}), shape_only(DType::F32, {8392, 64})};
    for (int i = 0; i < 3; ++i) c.outputs.push_back(shape_only(DType::BF16, {8392, 24, 128}));
    c.params = {1e-6};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
