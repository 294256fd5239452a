// conv2d (or upsample_nearest2x_conv2d) taking its output's GroupNorm statistics as it writes it, then group_norm
// given them (backend/norm/group_stats.h): outputs y and group_norm(y).
// Rounding model: conv2d's (CUDA: the split activations') for y, then group_norm's own model on those tracked
// values; statistics from the consumers' runs (fp32 sums of 16 or 128 values shifted by the first, combined in
// fp64) lie inside group_norm's two-pass fp32 model. The cases reach the CUDA kernels that take them with
// TF_GROUP_STATS=rows (row tiles, sub-pixel classes) or all (also halo tiles: 96 outputs, 192 as two, a row not a
// multiple of the tile) and ones that leave them to a pass.
#include "backend/conv/conv2d.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "backend/norm/group_norm.h"
#include "backend/norm/group_stats.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// params: groups, eps, silu, has_residual, upsample; a 3x3 "same" window, or 1x1 by w's shape.
Conv2dGeometry geometry(int64_t k) {
  return k == 3 ? kConvSame3x3 : kConvPointwise;
}

Case make_case(Rng& rng, int64_t ci, int64_t co, int64_t h, int64_t w, int64_t k, bool residual, bool up,
               double bias_offset = 0) {
  const int64_t ho = up ? 2 * h : h, wo = up ? 2 * w : w;
  Case c;
  c.label = label({{"ci", ci}, {"co", co}, {"h", h}, {"w", w}, {"k", k}}) + (residual ? " residual" : "") +
            (up ? " upsample" : "") + (bias_offset != 0 ? " bias+" + std::to_string(int(bias_offset)) : "");
  c.inputs = {random_normal(rng, DType::F32, {ci, h, w}, 1.0),
              random_normal(rng, DType::BF16, {co, ci, k, k}, 1.0 / std::sqrt(static_cast<double>(ci * k * k))),
              random_normal(rng, DType::BF16, {co}, 0.5), random_normal(rng, DType::BF16, {co}, 1.0),
              random_normal(rng, DType::BF16, {co}, 0.5)};
  if (bias_offset != 0) map_values(c.inputs[2], [&](double b) { return bf16_of(b + bias_offset); });
  if (residual) c.inputs.push_back(random_normal(rng, DType::F32, {co, ho, wo}));
  c.outputs = {host_empty(DType::F32, {co, ho, wo}), host_empty(DType::F32, {co, ho, wo})};
  c.params = {32, 1e-6, 1, residual ? 1.0 : 0.0, up ? 1.0 : 0.0};
  return c;
}

Reference reference(const Case& c, bool split_inputs) {
  const Tensor &x = c.inputs[0], &w = c.inputs[1];
  const bool up = c.params[4] != 0;
  std::vector<Tracked> xv = tracked_of(x);
  Shape xs = x.shape;
  if (up) {  // the nearest 2x upsample: each value four times, exactly
    const int64_t ci = x.dim(0), h = x.dim(1), wd = x.dim(2);
    std::vector<Tracked> u(static_cast<size_t>(ci * 4 * h * wd));
    for (int64_t cc = 0; cc < ci; ++cc)
      for (int64_t i = 0; i < 2 * h; ++i)
        for (int64_t j = 0; j < 2 * wd; ++j) u[(cc * 2 * h + i) * 2 * wd + j] = xv[(cc * h + i / 2) * wd + j / 2];
    xv = std::move(u);
    xs = {ci, 2 * h, 2 * wd};
  }
  const std::vector<Tracked> rv = c.params[3] != 0 ? tracked_of(c.inputs[5]) : std::vector<Tracked>{};
  const int64_t co = w.dim(0), ho = c.outputs[0].dim(1), wo = c.outputs[0].dim(2);
  std::vector<Tracked> y = conv2d_tracked(xv, xs, tracked_of(w), w.shape, tracked_of(c.inputs[2]),
                                          c.params[3] != 0 ? &rv : nullptr, geometry(w.dim(2)), ho, wo, split_inputs);
  std::vector<Tracked> n = group_norm_tracked(y, co, ho * wo, static_cast<int>(c.params[0]), c.params[1],
                                              c.params[2] != 0, tracked_of(c.inputs[3]), tracked_of(c.inputs[4]));
  return {std::move(y), std::move(n)};
}

void run(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  const int groups = static_cast<int>(p[0]);
  const float eps = static_cast<float>(p[1]);
  GroupStats stats = make_group_stats(groups, eps, out[0].device);
  const Tensor* residual = p[3] != 0 ? &in[5] : nullptr;
  if (p[4] != 0) upsample_nearest2x_conv2d(in[0], in[1], in[2], geometry(in[1].dim(2)), out[0], residual, &stats);
  else conv2d(in[0], in[1], in[2], geometry(in[1].dim(2)), out[0], residual, &stats);
  group_norm(out[0], in[3], in[4], groups, eps, p[2] != 0, out[1], &stats);
}

}  // namespace

void register_conv2d_group_stats(bool cuda) {
  KernelContract k;
  k.name = "conv2d_group_stats";
  k.families = {"flux2_vae"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{
        make_case(rng, 8, 32, 5, 6, 3, true, false),       // CPU-sized; CUDA's gathering kernel and a pass
        make_case(rng, 64, 64, 4, 5, 3, true, false),      // CUDA's row tiles, fewer outputs than a tile
        make_case(rng, 64, 128, 3, 4, 3, false, true),     // sub-pixel classes: every other column stored
        make_case(rng, 128, 128, 4, 8, 1, true, false),    // 1x1 row tiles with a residual (the attention's out)
        make_case(rng, 192, 96, 3, 5, 1, false, false),    // 96-output column tiles
        make_case(rng, 96, 96, 2, 256, 3, true, false),    // halo tiles (one picture row of 128 a tile), residual
        make_case(rng, 64, 192, 1, 256, 3, false, false),  // 192 outputs as two halo tiles
        make_case(rng, 96, 96, 2, 200, 3, false, false),   // halo tiles, the row's last tile part outside
        make_case(rng, 64, 192, 3, 12, 3, false, false),   // 192-output column tiles: a pass
    };
  };
  k.adversarial_cases = [](Rng& rng) {
    return std::vector<Case>{make_case(rng, 64, 64, 4, 5, 3, false, false, 3000.0),     // mean far above the spread
                             make_case(rng, 96, 96, 1, 256, 3, true, false, -3000.0)};  // the same, halo tiles
  };
  k.reference = [](const Case& c) { return reference(c, false); };
  k.cuda_reference = [](const Case& c) { return reference(c, true); };
  k.run = run;
  k.controls = {
      perturbed_params("statistics-over-two-groups", [](Params& p) { p[0] = p[0] / 2; }),
      perturbed_params("dropped-silu", [](Params& p) { p[2] = p[2] != 0 ? 0 : 1; }),
      perturbed_inputs("dropped-bias", [](std::vector<Tensor>& in) { map_values(in[2], [](double) { return 0.0; }); }),
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
