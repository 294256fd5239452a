// upsample_nearest2x_conv2d: y = residual + (bias + sum w * upsample_nearest2x(x)), 3x3, stride 1, padding 1.
// CPU: the composition (conv2d's rounding model over the upsampled picture).
// CUDA (backend/cuda/kernels/conv/subpixel_weights.h): with input channels a multiple of 64 and outputs
// neither 96 nor at most 4, four sub-pixel classes: each of the 2x2 inputs an output reads is weighted by
// the fp32 sum of the 3x3 weights landing on it (rows then columns), and that product is formed as split
// bf16 tensor cores do, hi*hi + hi*lo + lo*hi of the summed weight and the input; otherwise conv2d's
// CUDA model over the upsampled picture (w * hi + w * lo).
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"

namespace tf::contract {

namespace {

// The CUDA backend's dispatch rule for the sub-pixel classes (conv2d_launch.cu's subpixel_applies).
bool cuda_subpixel(int64_t ci, int64_t co) { return ci % 64 == 0 && co != 96 && co > 4; }

Case make_case(Rng& rng, int64_t ci, int64_t co, int64_t h, int64_t w, bool residual) {
  Case c;
  c.label = label({{"ci", ci}, {"co", co}, {"h", h}, {"w", w}}) + (residual ? " residual" : "");
  c.inputs = {random_normal(rng, DType::F32, {ci, h, w}),
              random_normal(rng, DType::BF16, {co, ci, 3, 3}, 1.0 / std::sqrt(static_cast<double>(ci * 9))),
              random_normal(rng, DType::BF16, {co}, 0.5)};
  if (residual) c.inputs.push_back(random_normal(rng, DType::F32, {co, 2 * h, 2 * w}));
  c.outputs = {host_empty(DType::F32, {co, 2 * h, 2 * w})};
  c.params = {residual ? 1.0 : 0.0};
  return c;
}

// The fp32 sum of the 3x3 weights of output (oy, ox) that land on input (sy, sx), rows then columns.
double summed_weight(const std::vector<Tracked>& wv, int64_t at, int64_t oy, int64_t ox, int64_t sy, int64_t sx,
                     int64_t H2, int64_t W2) {
  float s = 0.f;
  for (int64_t ky = 0; ky < 3; ++ky)
    for (int64_t kx = 0; kx < 3; ++kx) {
      const int64_t uy = oy - 1 + ky, ux = ox - 1 + kx;
      if (uy >= 0 && uy < H2 && ux >= 0 && ux < W2 && uy / 2 == sy && ux / 2 == sx)
        s += static_cast<float>(wv[at + 3 * ky + kx].v);
    }
  return s;
}

// mode 0: CPU, 1: CUDA, 2: the summed weights rounded to bf16 (a faulty kernel, for a control).
std::vector<double> forward(const Case& c, int mode, std::vector<Tracked>* tracked = nullptr) {
  const Tensor &x = c.inputs[0], &w = c.inputs[1];
  const int64_t ci = x.dim(0), h = x.dim(1), wd = x.dim(2), co = w.dim(0), H2 = 2 * h, W2 = 2 * wd;
  std::vector<Tracked> xv = tracked_of(x), wv = tracked_of(w), bv = tracked_of(c.inputs[2]);
  std::vector<Tracked> rv = c.params[0] != 0 ? tracked_of(c.inputs[3]) : std::vector<Tracked>{};
  const bool sub = mode == 2 || (mode == 1 && cuda_subpixel(ci, co));
  std::vector<double> values(static_cast<size_t>(co * H2 * W2));
  if (tracked) tracked->assign(values.size(), Tracked{});
  for (int64_t o = 0; o < co; ++o)
    for (int64_t i = 0; i < H2; ++i)
      for (int64_t j = 0; j < W2; ++j) {
        F32Sum sum;
        double plain = 0;
        for (int64_t cc = 0; cc < ci; ++cc) {
          const int64_t wat = (o * ci + cc) * 9;
          if (sub) {
            for (int64_t sy = (i + 1) / 2 - 1; sy <= (i + 1) / 2; ++sy)
              for (int64_t sx = (j + 1) / 2 - 1; sx <= (j + 1) / 2; ++sx) {
                if (sy < 0 || sy >= h || sx < 0 || sx >= wd) continue;
                const double ws = summed_weight(wv, wat, i, j, sy, sx, H2, W2);
                const Tracked& xt = xv[(cc * h + sy) * wd + sx];
                if (mode == 2) plain += bf16_of(ws) * xt.v;
                else sum.add_split_bf16_product(exact(ws), xt);
              }
            continue;
          }
          for (int64_t a = 0; a < 3; ++a)
            for (int64_t b = 0; b < 3; ++b) {
              const int64_t yy = i - 1 + a, xx = j - 1 + b;
              if (yy < 0 || yy >= H2 || xx < 0 || xx >= W2) continue;
              const Tracked &wt = wv[wat + 3 * a + b], &xt = xv[(cc * h + yy / 2) * wd + xx / 2];
              if (mode == 1) sum.add_split_bf16_product(wt, xt);
              else sum.add(f32_mul(wt, xt));
            }
        }
        const size_t at = static_cast<size_t>((o * H2 + i) * W2 + j);
        sum.add(bv[o]);
        plain += bv[o].v;
        if (!rv.empty()) sum.add(rv[at]), plain += rv[at].v;
        const Tracked t = sum.result();
        values[at] = mode == 2 ? plain : t.v;
        if (tracked) (*tracked)[at] = t;
      }
  return values;
}

Reference reference(const Case& c, int mode) {
  std::vector<Tracked> y;
  forward(c, mode, &y);
  return {y};
}

void run(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  upsample_nearest2x_conv2d(in[0], in[1], in[2], {}, out[0], p[0] != 0 ? &in[3] : nullptr);
}

}  // namespace

void register_upsample_nearest2x_conv2d(bool cuda) {
  KernelContract k;
  k.name = "upsample_nearest2x_conv2d";
  k.families = {"flux2_vae"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{
        make_case(rng, 8, 5, 4, 5, false),     // CUDA: the gathering kernel over the upsampled picture
        make_case(rng, 64, 8, 5, 6, true),     // CUDA: sub-pixel classes, row tiles (8 outputs)
        make_case(rng, 128, 192, 3, 4, false), // sub-pixel, 192 outputs as N
        make_case(rng, 64, 130, 3, 5, true),   // sub-pixel, two row tiles, the second partial
        make_case(rng, 64, 96, 4, 3, false),   // CUDA: 96 outputs read through the upsample
    };
  };
  k.adversarial_cases = [](Rng& rng) {
    Case c = make_case(rng, 64, 6, 3, 3, false);  // weights that cancel in their sums: -w, +w along rows
    std::vector<double> w = values_of(c.inputs[1]);
    for (size_t p = 0; p < w.size(); p += 9)
      for (int kx = 0; kx < 3; ++kx) w[p + 3 + kx] = -w[p + 6 + kx];
    set_values(c.inputs[1], w);
    c.label = "row taps cancelling in their sums";
    return std::vector<Case>{c};
  };
  k.reference = [](const Case& c) { return reference(c, 0); };
  k.cuda_reference = [](const Case& c) { return reference(c, 1); };
  k.run = run;
  k.controls = {
      perturbed_inputs("bf16-activations", [](std::vector<Tensor>& in) { map_values(in[0], bf16_of); }),
      perturbed_inputs("dropped-bias", [](std::vector<Tensor>& in) { map_values(in[2], [](double) { return 0.0; }); }),
      reimplemented("summed-weights-in-bf16", [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
        Case c;
        c.inputs = in;
        c.params = p;
        set_values(out[0], forward(c, 2));
      }),
  };
  k.limit_cases = [] {
    // The small decoder's upsamplers at 1024^2: 384 channels 256^2 -> 512^2, 192 channels 512^2 -> 1024^2.
    std::vector<Case> cs;
    for (auto [ch, hw] : {std::pair{384, 256}, {192, 512}}) {
      Case c;
      c.label = label({{"c", ch}, {"hw", hw}});
      c.inputs = {shape_only(DType::F32, {ch, hw, hw}), shape_only(DType::BF16, {ch, ch, 3, 3}), shape_only(DType::BF16, {ch})};
      c.outputs = {shape_only(DType::F32, {ch, 2 * hw, 2 * hw})};
      c.params = {0};
      cs.push_back(c);
    }
    return cs;
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
