// rms_norm, r = rsqrt(fp32 sum(x^2) / d + eps), in its two weight forms:
//   one_plus (and the fused residual add ahead of it): y = bf16((x * r) * (1 + w))   (fp32 products, one rounding)
//   plain: y = bf16(bf16(x * r) * w)                                                 (two roundings)
// and the modulated norm (rms_norm_modulate, and the gated residual add ahead of it), one rounding.
#include "backend/norm/rms_norm.h"
#include "backend/norm/rms_norm_modulate.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

Tracked inv_rms_reference(const std::vector<Tracked>& x, int64_t r, int64_t d, double eps, std::vector<Tracked>& sq) {
  for (int64_t i = 0; i < d; ++i) sq[i] = f32_mul(x[r * d + i], x[r * d + i]);
  return f32_rsqrt(f32_add(f32_div(f32_sum(sq), exact(static_cast<double>(d))), exact(f32_of(eps))));
}

std::vector<Tracked> rms_norm_one_plus_reference(const std::vector<Tracked>& x, const std::vector<Tracked>& w, int64_t d, double eps) {
  const int64_t rows = static_cast<int64_t>(x.size()) / d;
  std::vector<Tracked> y(x.size()), sq(static_cast<size_t>(d)), scale(static_cast<size_t>(d));
  for (int64_t i = 0; i < d; ++i) scale[i] = f32_add(exact(1.0), w[i]);
  for (int64_t r = 0; r < rows; ++r) {
    const Tracked inv = inv_rms_reference(x, r, d, eps, sq);
    for (int64_t i = 0; i < d; ++i) y[r * d + i] = round_bf16_point(f32_mul(f32_mul(x[r * d + i], inv), scale[i]));
  }
  return y;
}

std::vector<Tracked> rms_norm_plain_reference(const std::vector<Tracked>& x, const std::vector<Tracked>& w, int64_t d,
                                              double eps) {
  const int64_t rows = static_cast<int64_t>(x.size()) / d;
  std::vector<Tracked> y(x.size()), sq(static_cast<size_t>(d));
  for (int64_t r = 0; r < rows; ++r) {
    const Tracked inv = inv_rms_reference(x, r, d, eps, sq);
    for (int64_t i = 0; i < d; ++i) y[r * d + i] = round_bf16_point(f32_mul(round_bf16_point(f32_mul(x[r * d + i], inv)), w[i]));
  }
  return y;
}

namespace {

// params: eps. inputs: x, w (plain) or h, d, w (fused; d as `shares` k-share sums when shares > 0).
Case make_case(Rng& rng, int64_t rows, int64_t d, DType wt, bool fused, double sigma = 1.0, int shares = 0) {
  Case c;
  c.label = label({{"rows", rows}, {"d", d}}) + (wt == DType::F32 ? " w=F32" : " w=BF16") +
            (shares ? " d=" + std::to_string(shares) + " k-share sums" : "");
  c.inputs = {random_normal(rng, DType::BF16, {rows, d}, sigma)};
  if (fused && shares) c.inputs.push_back(random_normal(rng, DType::F32, {shares, rows, d}, sigma / shares));
  else if (fused) c.inputs.push_back(random_normal(rng, DType::BF16, {rows, d}, sigma));
  c.inputs.push_back(random_normal(rng, wt, {d}, 0.3));
  c.outputs = {host_empty(DType::BF16, {rows, d})};
  if (fused) c.outputs.push_back(host_empty(DType::BF16, {rows, d}));
  c.params = {1e-6};
  return c;
}

std::vector<Case> random_cases(Rng& rng, bool fused) {
  std::vector<Case> cs{make_case(rng, 63, 64, DType::BF16, fused), make_case(rng, 65, 96, DType::F32, fused),
                       make_case(rng, 1, 256, DType::BF16, fused), make_case(rng, 16, 4096, DType::BF16, fused),
                       make_case(rng, 64, 33, DType::F32, fused)};
  if (fused) {  // the residual as a product's k-share sums: the vector rows and the scalar ones
    cs.push_back(make_case(rng, 75, 4096, DType::BF16, true, 1.0, 4));
    cs.push_back(make_case(rng, 9, 100, DType::F32, true, 1.0, 2));
  }
  return cs;
}

std::vector<Case> adversarial_cases(Rng& rng, bool fused) {
  std::vector<Case> cs{make_case(rng, 8, 64, DType::BF16, fused, 0x1p-70),   // eps dominates the mean square
                       make_case(rng, 8, 64, DType::BF16, fused, 0x1p60)};   // squares near fp32's top
  // One large value among small ones in each row, and rows of exact zeros.
  Case spike = make_case(rng, 6, 128, DType::BF16, fused);
  std::vector<double> x = values_of(spike.inputs[0]);
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t i = 0; i < 128; ++i) x[r * 128 + i] = r == 5 ? 0.0 : (i == r ? 0x1p20 : x[r * 128 + i] * 0x1p-10);
  set_values(spike.inputs[0], x);
  spike.label = "spikes and zero rows";
  cs.push_back(spike);
  return cs;
}

Reference plain_reference(const Case& c) {
  return {rms_norm_one_plus_reference(tracked_of(c.inputs[0]), tracked_of(c.inputs[1]), c.inputs[0].dim(1), c.params[0])};
}

Reference fused_reference(const Case& c) {
  std::vector<Tracked> h = tracked_of(c.inputs[0]), d = residual_delta_reference(c.inputs[1]);
  for (size_t i = 0; i < h.size(); ++i) h[i] = round_bf16_point(f32_add(h[i], d[i]));
  return {h, rms_norm_one_plus_reference(h, tracked_of(c.inputs[2]), c.inputs[0].dim(1), c.params[0])};
}

Reference weight_plain_reference(const Case& c) {
  return {rms_norm_plain_reference(tracked_of(c.inputs[0]), tracked_of(c.inputs[1]), c.inputs[0].dim(1), c.params[0])};
}

// The plain form's inputs: bf16 weights (torch multiplies bf16 by bf16).
std::vector<Case> weight_plain_cases(Rng& rng, bool adversarial) {
  std::vector<Case> cs = adversarial ? adversarial_cases(rng, false) : random_cases(rng, false);
  for (Case& c : cs)
    if (c.inputs[1].dtype != DType::BF16) c = make_case(rng, c.inputs[0].dim(0), c.inputs[0].dim(1), DType::BF16, false);
  return cs;
}

// The plain form computed in one rounding, as the one_plus form rounds: a dropped rounding point.
void dropped_rounding(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  const int64_t d = in[0].dim(1), rows = in[0].dim(0);
  std::vector<double> x = values_of(in[0]), w = values_of(in[1]), y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t i = 0; i < d; ++i) s += static_cast<float>(x[r * d + i] * x[r * d + i]);
    float inv = 1 / std::sqrt(s / d + static_cast<float>(p[0]));
    for (int64_t i = 0; i < d; ++i) y[r * d + i] = (static_cast<float>(x[r * d + i]) * inv) * static_cast<float>(w[i]);
  }
  set_values(out[0], y);
}

// The normalised value rounded to bf16 before the (1 + w) scale: an added rounding point.
void added_rounding(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  const int64_t d = in[0].dim(1), rows = in[0].dim(0);
  std::vector<double> x = values_of(in[0]), w = values_of(in.back()), y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t i = 0; i < d; ++i) s += static_cast<float>(x[r * d + i] * x[r * d + i]);
    float inv = 1 / std::sqrt(s / d + static_cast<float>(p[0]));
    for (int64_t i = 0; i < d; ++i)
      y[r * d + i] = static_cast<float>(bf16_of(static_cast<float>(x[r * d + i]) * inv)) * (1 + static_cast<float>(w[i]));
  }
  set_values(out[0], y);
}

// The modulated norm: y = bf16(((x * r) * w) * (1 + scale) + shift), fp32 steps, one rounding.
std::vector<Tracked> modulated_reference(const std::vector<Tracked>& x, int64_t d, double eps, const std::vector<Tracked>& w,
                                         const std::vector<Tracked>& sh, const std::vector<Tracked>& sc) {
  const int64_t rows = static_cast<int64_t>(x.size()) / d;
  std::vector<Tracked> y(x.size()), sq(static_cast<size_t>(d));
  for (int64_t r = 0; r < rows; ++r) {
    const Tracked inv = inv_rms_reference(x, r, d, eps, sq);
    for (int64_t i = 0; i < d; ++i) {
      const Tracked n = f32_mul(f32_mul(x[r * d + i], inv), w[i]);
      y[r * d + i] = round_bf16_point(f32_add(f32_mul(n, f32_add(exact(1.0), sc[i])), sh[i]));
    }
  }
  return y;
}

// The plain cases (x, w) given the gated residual's d and gate after h, and a modulation: inputs h, d,
// gate, w, shift, scale; outputs h, y. The random ones gain a row of 3,072 (the transformer's width);
// the adversarial ones take d in proportion to h (zero rows stay zero, spikes stay spikes).
std::vector<Case> gated_residual_cases(Rng& rng, std::vector<Case> cs, bool adversarial) {
  if (!adversarial) cs.push_back(make_case(rng, 40, 3072, DType::BF16, false));
  for (Case& c : cs) {
    const int64_t rows = c.inputs[0].dim(0), d = c.inputs[0].dim(1);
    const Tensor w = c.inputs[1];
    Tensor delta = random_normal(rng, DType::BF16, {rows, d});
    if (adversarial) {
      std::vector<double> h = values_of(c.inputs[0]), v = values_of(delta);
      for (size_t i = 0; i < v.size(); ++i) v[i] *= h[i];
      set_values(delta, v);
    }
    c.inputs = {c.inputs[0], delta, random_normal(rng, DType::BF16, {d}, 0.5), w,
                random_normal(rng, DType::BF16, {d}), random_normal(rng, DType::BF16, {d}, 0.5)};
    c.outputs = {host_empty(DType::BF16, {rows, d}), host_empty(DType::BF16, {rows, d})};
  }
  return cs;
}

}  // namespace

void register_rms_norm(bool cuda) {
  KernelContract k;
  k.name = "rms_norm_one_plus";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) { return random_cases(rng, false); };
  k.adversarial_cases = [](Rng& rng) { return adversarial_cases(rng, false); };
  k.reference = plain_reference;
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    rms_norm(in[0], in[1], {NormWeight::one_plus, static_cast<float>(p[0])}, out[0]);
  };
  k.controls = {
      reimplemented("added-rounding-before-scale", added_rounding),
      perturbed_inputs("plain-w-instead-of-1+w", [](std::vector<Tensor>& in) { map_values(in[1], [](double w) { return w - 1; }); }),
      perturbed_params("dropped-eps", [](Params& p) { p[0] = 0; }),
      perturbed_inputs("fp16-staging", [](std::vector<Tensor>& in) { map_values(in[0], f16_of); }),
  };
  k.limit_cases = [] {
    std::vector<Case> cs;
    for (auto [rows, d] : {std::pair{4096, 4096}, {4096 * 16, 256}, {1, 4096}}) {
      Case c;
      c.label = label({{"rows", rows}, {"d", d}});
      c.inputs = {shape_only(DType::BF16, {rows, d}), shape_only(DType::BF16, {d})};
      c.outputs = {shape_only(DType::BF16, {rows, d})};
      c.params = {1e-6};
      cs.push_back(c);
    }
    return cs;
  };
  add_kernel(k);

  KernelContract pl;
  pl.name = "rms_norm_plain";
  pl.families = {"moss_image"};
  pl.backends = backends(cuda);
  pl.random_cases = [](Rng& rng) { return weight_plain_cases(rng, false); };
  pl.adversarial_cases = [](Rng& rng) { return weight_plain_cases(rng, true); };
  pl.reference = weight_plain_reference;
  pl.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    rms_norm(in[0], in[1], {NormWeight::plain, static_cast<float>(p[0])}, out[0]);
  };
  pl.controls = {
      reimplemented("dropped-rounding-before-w", dropped_rounding),
      perturbed_inputs("1+w-instead-of-w", [](std::vector<Tensor>& in) { map_values(in[1], [](double w) { return w + 1; }); }),
      perturbed_params("dropped-eps", [](Params& p) { p[0] = 0; }),
      perturbed_inputs("fp16-staging", [](std::vector<Tensor>& in) { map_values(in[0], f16_of); }),
  };
  add_kernel(std::move(pl));

  // rms_norm_modulate: y = bf16(((x * r) * w) * (1 + scale) + shift), fp32 steps, one rounding.
  KernelContract nm;
  nm.name = "rms_norm_modulate";
  nm.families = {"moss_image"};
  nm.backends = backends(cuda);
  auto with_modulation = [](Rng& rng, std::vector<Case> cs) {
    for (Case& c : cs) {
      const int64_t d = c.inputs[0].dim(1);
      c.inputs.push_back(random_normal(rng, DType::BF16, {d}));
      c.inputs.push_back(random_normal(rng, DType::BF16, {d}, 0.5));
    }
    return cs;
  };
  nm.random_cases = [with_modulation](Rng& rng) { return with_modulation(rng, weight_plain_cases(rng, false)); };
  nm.adversarial_cases = [with_modulation](Rng& rng) { return with_modulation(rng, weight_plain_cases(rng, true)); };
  nm.reference = [](const Case& c) {
    return Reference{modulated_reference(tracked_of(c.inputs[0]), c.inputs[0].dim(1), c.params[0], tracked_of(c.inputs[1]),
                                         tracked_of(c.inputs[2]), tracked_of(c.inputs[3]))};
  };
  nm.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    rms_norm_modulate(in[0], in[1], static_cast<float>(p[0]), in[2], in[3], out[0]);
  };
  nm.controls = {
      perturbed_inputs("dropped-norm-weight", [](std::vector<Tensor>& in) { map_values(in[1], [](double) { return 1.0; }); }),
      perturbed_inputs("swapped-shift-and-scale", [](std::vector<Tensor>& in) { std::swap(in[2], in[3]); }),
      perturbed_inputs("dropped-shift", [](std::vector<Tensor>& in) { map_values(in[2], [](double) { return 0.0; }); }),
      perturbed_params("dropped-eps", [](Params& p) { p[0] = 0; }),
  };
  nm.limit_cases = [] {
    Case c;
    c.label = label({{"rows", 8392}, {"d", 3072}});
    c.inputs = {shape_only(DType::BF16, {8392, 3072}), shape_only(DType::BF16, {3072}), shape_only(DType::BF16, {3072}),
                shape_only(DType::BF16, {3072})};
    c.outputs = {shape_only(DType::BF16, {8392, 3072})};
    c.params = {1e-6};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(nm));

  // residual_add_rms_norm_modulate: h = bf16(h + d * gate) (no fma), then the modulated norm of h.
  KernelContract gm;
  gm.name = "residual_add_rms_norm_modulate";
  gm.families = {"moss_image"};
  gm.backends = backends(cuda);
  gm.random_cases = [](Rng& rng) { return gated_residual_cases(rng, weight_plain_cases(rng, false), false); };
  gm.adversarial_cases = [](Rng& rng) { return gated_residual_cases(rng, weight_plain_cases(rng, true), true); };
  gm.reference = [](const Case& c) {
    std::vector<Tracked> h = tracked_of(c.inputs[0]);
    const std::vector<Tracked> d = tracked_of(c.inputs[1]), g = tracked_of(c.inputs[2]);
    const int64_t n = c.inputs[0].dim(1);
    for (size_t i = 0; i < h.size(); ++i) h[i] = round_bf16_point(f32_add(h[i], f32_mul(d[i], g[i % n])));
    return Reference{h, modulated_reference(h, n, c.params[0], tracked_of(c.inputs[3]), tracked_of(c.inputs[4]),
                                            tracked_of(c.inputs[5]))};
  };
  gm.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    copy_into(out[0], in[0]);  // h is updated in place: run on the output's copy
    residual_add_rms_norm_modulate(out[0], in[1], in[2], in[3], static_cast<float>(p[0]), in[4], in[5], out[1]);
  };
  gm.controls = {
      perturbed_inputs("dropped-residual", [](std::vector<Tensor>& in) { map_values(in[1], [](double) { return 0.0; }); }),
      perturbed_inputs("dropped-gate", [](std::vector<Tensor>& in) { map_values(in[2], [](double) { return 1.0; }); }),
      perturbed_inputs("swapped-shift-and-scale", [](std::vector<Tensor>& in) { std::swap(in[4], in[5]); }),
      perturbed_params("dropped-eps", [](Params& p) { p[0] = 0; }),
  };
  gm.limit_cases = [] {
    Case c;
    c.label = label({{"rows", 8392}, {"d", 3072}});
    const Tensor rows = shape_only(DType::BF16, {8392, 3072}), vec = shape_only(DType::BF16, {3072});
    c.inputs = {rows, rows, vec, vec, vec, vec};
    c.outputs = {rows, rows};
    c.params = {1e-6};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(gm));

  KernelContract f;
  f.name = "residual_add_rms_norm_one_plus";
  f.families = {"moss_image"};
  f.backends = backends(cuda);
  f.random_cases = [](Rng& rng) { return random_cases(rng, true); };
  f.adversarial_cases = [](Rng& rng) { return adversarial_cases(rng, true); };
  f.reference = fused_reference;
  f.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    copy_into(out[0], in[0]);  // h is updated in place: run on the output's copy
    residual_add_rms_norm(out[0], in[1], in[2], {NormWeight::one_plus, static_cast<float>(p[0])}, out[1]);
  };
  f.controls = {
      perturbed_inputs("dropped-residual", [](std::vector<Tensor>& in) { map_values(in[1], [](double) { return 0.0; }); }),
      perturbed_inputs("k-shares-as-one", [](std::vector<Tensor>& in) {  // every share replaced by the first
        if (in[1].dtype != DType::F32) return;  // bf16 rows: nothing to perturb, the share cases must catch it
        std::vector<double> v = values_of(in[1]);
        const size_t n = v.size() / static_cast<size_t>(in[1].dim(0));
        for (size_t i = n; i < v.size(); ++i) v[i] = v[i % n];
        set_values(in[1], v);
      }),
      perturbed_inputs("plain-w-instead-of-1+w", [](std::vector<Tensor>& in) { map_values(in[2], [](double w) { return w - 1; }); }),
      perturbed_params("dropped-eps", [](Params& p) { p[0] = 0; }),
  };
  f.limit_cases = [] {
    Case c;
    c.label = "rows=4096 d=4096";
    c.inputs = {shape_only(DType::BF16, {4096, 4096}), shape_only(DType::BF16, {4096, 4096}), shape_only(DType::BF16, {4096})};
    c.outputs = {shape_only(DType::BF16, {4096, 4096}), shape_only(DType::BF16, {4096, 4096})};
    c.params = {1e-6};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(f));
}

}  // namespace tf::contract
