// conv2d: fp32 activations x bf16 weights, fp32 sums; y = residual + (bias + sum w * x).
// Rounding model: each product of a bf16 weight and an fp32 input is one fp32 rounding; the
// products, the bias and the residual are one fp32 sum of n + 2 terms in any order (which covers
// "bias last, residual after" and "accumulator started from the bias" alike).
// CUDA (declared in backend/conv/conv2d.h): each input enters as its bf16 split, so each product is the
// two exact terms w * hi + w * lo of a sum of 2n + 2 terms.
#include "backend/conv/conv2d.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

std::vector<Tracked> conv2d_tracked(const std::vector<Tracked>& xv, const Shape& xs, const std::vector<Tracked>& wv,
                                    const Shape& ws, const std::vector<Tracked>& bv, const std::vector<Tracked>* rv,
                                    const Conv2dGeometry& g, int64_t ho, int64_t wo, bool split_inputs) {
  const int64_t ci = xs[0], h = xs[1], wd = xs[2], co = ws[0], kh = ws[2], kw = ws[3];
  std::vector<Tracked> y(static_cast<size_t>(co * ho * wo));
  for (int64_t o = 0; o < co; ++o)
    for (int64_t i = 0; i < ho; ++i)
      for (int64_t j = 0; j < wo; ++j) {
        F32Sum sum;
        for (int64_t cc = 0; cc < ci; ++cc)
          for (int64_t a = 0; a < kh; ++a)
            for (int64_t b = 0; b < kw; ++b) {
              int64_t yy = i * g.stride - g.pad_top + a, xx = j * g.stride - g.pad_left + b;
              if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;  // zero padding: exact zero terms
              const Tracked &wt = wv[((o * ci + cc) * kh + a) * kw + b], &xt = xv[(cc * h + yy) * wd + xx];
              if (split_inputs) sum.add_split_bf16_product(wt, xt);
              else sum.add(f32_mul(wt, xt));
            }
        sum.add(bv[o]);
        if (rv) sum.add((*rv)[(o * ho + i) * wo + j]);
        y[(o * ho + i) * wo + j] = sum.result();
      }
  return y;
}

namespace {

// params: stride, pad_top, pad_left, pad_bottom, pad_right, has_residual
Conv2dGeometry geometry(const Params& p) {
  Conv2dGeometry g;
  g.stride = static_cast<int>(p[0]);
  g.pad_top = static_cast<int>(p[1]);
  g.pad_left = static_cast<int>(p[2]);
  g.pad_bottom = static_cast<int>(p[3]);
  g.pad_right = static_cast<int>(p[4]);
  return g;
}

Case make_case(Rng& rng, int64_t ci, int64_t co, int64_t h, int64_t w, int64_t k, Params p, double x_sigma = 1.0) {
  Conv2dGeometry g = geometry(p);
  int64_t ho = conv2d_out_extent(h, static_cast<int>(k), g.stride, g.pad_top, g.pad_bottom);
  int64_t wo = conv2d_out_extent(w, static_cast<int>(k), g.stride, g.pad_left, g.pad_right);
  Case c;
  c.label = label({{"ci", ci}, {"co", co}, {"h", h}, {"w", w}, {"k", k}, {"stride", g.stride}}) +
            (p[5] != 0 ? " residual" : "");
  c.inputs = {random_normal(rng, DType::F32, {ci, h, w}, x_sigma),
              random_normal(rng, DType::BF16, {co, ci, k, k}, 1.0 / std::sqrt(static_cast<double>(ci * k * k))),
              random_normal(rng, DType::BF16, {co}, 0.5)};
  if (p[5] != 0) c.inputs.push_back(random_normal(rng, DType::F32, {co, ho, wo}));
  c.outputs = {host_empty(DType::F32, {co, ho, wo})};
  c.params = std::move(p);
  return c;
}

Reference conv2d_reference(const Case& c, bool split_inputs) {
  const std::vector<Tracked> none;
  const std::vector<Tracked> rv = c.params[5] != 0 ? tracked_of(c.inputs[3]) : none;
  return {conv2d_tracked(tracked_of(c.inputs[0]), c.inputs[0].shape, tracked_of(c.inputs[1]), c.inputs[1].shape,
                         tracked_of(c.inputs[2]), c.params[5] != 0 ? &rv : nullptr, geometry(c.params),
                         c.outputs[0].dim(1), c.outputs[0].dim(2), split_inputs)};
}

// Adversarial: channel 0 holds 1 + j 2^-12 (fp32, not TF32 or bf16), channel 1 holds 1; the centre
// taps are +1 and -1, so each output is exactly j 2^-12 + bias from terms of size 1. Channels 2, 3
// hold +-2^20 under equal taps: terms that cancel exactly at a huge dynamic range.
// With `low_bits`, channel 0 holds 1 + 2^-8 + j 2^-20 and channel 1 holds 1 + 2^-8: the exact
// output j 2^-20 needs all 24 bits of the input (a bf16 hi + lo split keeps about 16).
Case cancelling_taps(Rng& rng, bool huge, bool low_bits = false) {
  const int64_t ci = 4, co = 3, h = 6, w = 7, k = 3;
  std::vector<double> x(ci * h * w), wt(co * ci * k * k, 0.0), b(co, 0.0);
  for (int64_t p = 0; p < h * w; ++p) {
    x[p] = low_bits ? 1 + 0x1p-8 + static_cast<double>(1 + rng.below(7)) * 0x1p-20
                    : 1 + static_cast<double>(rng.below(16)) * 0x1p-12;
    x[h * w + p] = low_bits ? 1 + 0x1p-8 : 1;
    double big = (rng.below(2) ? 1 : -1) * 0x1p20;
    x[2 * h * w + p] = huge ? big : 0;
    x[3 * h * w + p] = huge ? -big : 0;
  }
  for (int64_t o = 0; o < co; ++o) {
    wt[((o * ci + 0) * k + 1) * k + 1] = 1;
    wt[((o * ci + 1) * k + 1) * k + 1] = -1;
    for (int64_t t = 0; t < k * k; ++t) {
      double tap = huge ? static_cast<double>(1 + rng.below(4)) : 0;
      wt[(o * ci + 2) * k * k + t] = tap;
      wt[(o * ci + 3) * k * k + t] = tap;
    }
  }
  Case c;
  c.label = huge ? "cancelling taps at +-2^20" : low_bits ? "cancelling taps, 2^-20 signal" : "cancelling taps, 2^-12 signal";
  c.inputs = {host_tensor(DType::F32, {ci, h, w}, x), host_tensor(DType::BF16, {co, ci, k, k}, wt),
              host_tensor(DType::BF16, {co}, b)};
  c.outputs = {host_empty(DType::F32, {co, h - 2, w - 2})};
  c.params = {1, 0, 0, 0, 0, 0};
  return c;
}

void run_conv2d(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  conv2d(in[0], in[1], in[2], geometry(p), out[0], p[5] != 0 ? &in[3] : nullptr);
}

}  // namespace

void register_conv2d(bool cuda) {
  KernelContract k;
  k.name = "conv2d";
  k.families = {"flux2_vae"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{
        make_case(rng, 3, 5, 7, 9, 3, {1, 1, 1, 1, 1, 0}),      // conv_in-like, odd sizes
        make_case(rng, 16, 8, 8, 8, 3, {1, 1, 1, 1, 1, 1}),     // resnet conv2 with the fused residual
        make_case(rng, 33, 4, 5, 6, 3, {1, 1, 1, 1, 1, 0}),     // odd channel count
        make_case(rng, 8, 6, 10, 9, 3, {2, 0, 0, 1, 1, 0}),     // downsample: pad right/bottom, stride 2
        make_case(rng, 12, 7, 5, 6, 1, {1, 0, 0, 0, 0, 1}),     // 1x1 shortcut with residual
        make_case(rng, 64, 9, 7, 6, 3, {1, 1, 1, 1, 1, 1}),     // 64-deep taps: CUDA's wgmma kernel
        make_case(rng, 128, 5, 4, 9, 3, {2, 0, 0, 1, 1, 0}),    // the same, stride 2
        make_case(rng, 64, 6, 5, 5, 1, {1, 0, 0, 0, 0, 1}),     // the same, 1x1 with residual
        make_case(rng, 96, 7, 6, 5, 3, {1, 1, 1, 1, 1, 1}),     // 96 deep: the wgmma kernel's taps padded to 128
        make_case(rng, 96, 5, 5, 6, 1, {1, 0, 0, 0, 0, 1}),     // the same, 1x1 with residual
        make_case(rng, 96, 96, 5, 4, 3, {1, 1, 1, 1, 1, 1}),    // 96 output channels: one tile, channels as N
        make_case(rng, 192, 192, 4, 3, 3, {1, 1, 1, 1, 1, 0}),  // 192: the same, three 64-deep taps
        make_case(rng, 192, 96, 9, 7, 3, {2, 0, 0, 1, 1, 0}),   // 96 outputs, stride 2
        make_case(rng, 96, 3, 9, 11, 3, {1, 1, 1, 1, 1, 1}),    // conv_out: 3 outputs on CUDA's CUDA-core kernel
        make_case(rng, 64, 1, 7, 5, 3, {1, 1, 1, 1, 1, 0}),     // the same, one output
    };
  };
  k.adversarial_cases = [](Rng& rng) {
    return std::vector<Case>{cancelling_taps(rng, false), cancelling_taps(rng, true), cancelling_taps(rng, false, true),
                             make_case(rng, 4, 3, 5, 5, 3, {1, 1, 1, 1, 1, 0}, 0x1p60)};  // large range
  };
  k.reference = [](const Case& c) { return conv2d_reference(c, false); };
  k.cuda_reference = [](const Case& c) { return conv2d_reference(c, true); };
  k.run = run_conv2d;
  k.controls = {
      perturbed_inputs("tf32-staging", [](std::vector<Tensor>& in) { map_values(in[0], tf32_of); }),
      perturbed_inputs("bf16-activations", [](std::vector<Tensor>& in) { map_values(in[0], bf16_of); }),
      // Activations as a bf16 high part plus a bf16 low part (about 16 significant bits).
      cpu_only(perturbed_inputs("bf16-hi-lo-split", [](std::vector<Tensor>& in) {
        map_values(in[0], [](double x) { Bf16Split s = bf16_split(x); return s.hi + s.lo; });
      })),
      perturbed_inputs("dropped-bias", [](std::vector<Tensor>& in) { map_values(in[2], [](double) { return 0.0; }); }),
      perturbed_inputs("swapped-kernel-axes", [](std::vector<Tensor>& in) {
        Tensor& w = in[1];  // [co, ci, kh, kw] -> taps read as [kw, kh]
        std::vector<double> v = values_of(w), t(v.size());
        int64_t kh = w.dim(2), kw = w.dim(3), planes = w.dim(0) * w.dim(1);
        if (kh != kw) return;
        for (int64_t p = 0; p < planes; ++p)
          for (int64_t a = 0; a < kh; ++a)
            for (int64_t b = 0; b < kw; ++b) t[(p * kh + b) * kw + a] = v[(p * kh + a) * kw + b];
        set_values(w, t);
      }),
  };
  k.limit_cases = [] {
    // The largest FLUX.2 VAE convolutions at 1024^2: 128 channels at full size, 256 -> 256 at 512^2;
    // MOSS-Image's small decoder's 96 at full size.
    std::vector<Case> cs;
    for (auto [ci, co, hw] : {std::tuple{128, 128, 1024}, {256, 256, 512}, {512, 512, 128}, {3, 128, 1024}, {128, 3, 1024},
                              {96, 96, 1024}}) {
      Case c;
      c.label = label({{"ci", ci}, {"co", co}, {"hw", hw}});
      c.inputs = {shape_only(DType::F32, {ci, hw, hw}), shape_only(DType::BF16, {co, ci, 3, 3}), shape_only(DType::BF16, {co})};
      c.outputs = {shape_only(DType::F32, {co, hw, hw})};
      c.params = {1, 1, 1, 1, 1, 0};
      cs.push_back(c);
    }
    return cs;
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
