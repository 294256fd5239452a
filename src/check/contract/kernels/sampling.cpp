// A sampling step's element-wise kernels: transpose_to_bf16 (latents to token rows, one rounding)
// and guided_euler_step (pred = u + g (c - u), x + (sigma_next - sigma) pred: each fp32 op rounded
// on its own, in the reference's order).
#include <cmath>

#include "backend/elementwise/guided_euler_step.h"
#include "backend/elementwise/transpose_to_bf16.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

Case transpose_case(Rng& rng, int64_t R, int64_t K) {
  Case c;
  c.label = label({{"rows", R}, {"cols", K}});
  c.inputs = {random_normal(rng, DType::F32, {R, K})};
  c.outputs = {host_empty(DType::BF16, {K, R})};
  return c;
}

// x [C, n], cond and uncond [n, C] velocities, scalars {g, sigma, sigma_next}; params[0] = 1 with uncond.
Case step_case(Rng& rng, int64_t C, int64_t n, double g, double sigma, double sigma_next, bool with_uncond) {
  Case c;
  c.label = label({{"channels", C}, {"tokens", n}}) + (with_uncond ? " guided" : " cond only");
  const std::vector<double> s{g, sigma, sigma_next};
  c.inputs = {random_normal(rng, DType::F32, {C, n}), random_normal(rng, DType::BF16, {n, C}),
              random_normal(rng, DType::BF16, {n, C}), host_tensor(DType::F32, {3}, s)};
  c.outputs = {host_empty(DType::F32, {C, n})};
  c.params = {with_uncond ? 1.0 : 0.0};
  return c;
}

// x nearly cancelling the step (a dt of 24 significant bits): the result is the step's rounding error's size.
Case cancelling_case(Rng& rng) {
  Case d = step_case(rng, 4, 64, 3.0, 0.953f, 0.024f, false);
  std::vector<double> dc = values_of(d.inputs[1]), dx(dc.size());
  const float dt = 0.024f - 0.953f;
  for (int64_t ch = 0; ch < 4; ++ch)
    for (int64_t i = 0; i < 64; ++i)
      dx[ch * 64 + i] = -double(float(double(dt) * dc[i * 4 + ch] * (1 + std::ldexp(1.0, -9) * (1 + i % 5))));
  d.inputs[0] = host_tensor(DType::F32, {4, 64}, dx);
  d.label += " cancelling";
  return d;
}

// The step with its faults: swap the branches, reverse dt, or round x to bf16. (A fused update is
// within the contract's allowance; the sampler's test holds the bytes to the host's.)
struct StepFault {
  bool swap = false, reverse = false, bf16_x = false;
};
void faulty_step(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, StepFault f) {
  const int64_t C = in[0].dim(0), n = in[0].dim(1);
  std::vector<double> x = values_of(in[0]), c = values_of(in[1]), u = values_of(in[2]), s = values_of(in[3]);
  const float g = float(s[0]), dt = f.reverse ? float(s[1]) - float(s[2]) : float(s[2]) - float(s[1]);
  for (int64_t ch = 0; ch < C; ++ch)
    for (int64_t i = 0; i < n; ++i) {
      float cv = float(c[i * C + ch]), uv = float(u[i * C + ch]);
      if (f.swap) std::swap(cv, uv);
      const float pred = p[0] != 0 ? uv + g * (cv - uv) : cv;
      double& xv = x[ch * n + i];
      xv = float(float(xv) + dt * pred);
      if (f.bf16_x) xv = bf16_of(xv);
    }
  set_values(out[0], x);
}

}  // namespace

void register_sampling(bool cuda) {
  KernelContract t;
  t.name = "transpose_to_bf16";
  t.families = {"moss_image"};
  t.backends = backends(cuda);
  t.random_cases = [](Rng& rng) {
    return std::vector<Case>{transpose_case(rng, 128, 64), transpose_case(rng, 33, 70), transpose_case(rng, 1, 5)};
  };
  t.adversarial_cases = [](Rng& rng) {
    // Ties at bf16's half step: round to even, not away.
    std::vector<double> v(96);
    for (size_t i = 0; i < v.size(); ++i) v[i] = (1.0 + (2 * double(i % 8) + 1) / 256.0) * std::ldexp(1.0, int(rng.below(20)) - 10);
    Case c;
    c.label = "ties";
    c.inputs = {host_tensor(DType::F32, {8, 12}, v)};
    c.outputs = {host_empty(DType::BF16, {12, 8})};
    return std::vector<Case>{c};
  };
  t.reference = [](const Case& c) {
    const int64_t R = c.inputs[0].dim(0), K = c.inputs[0].dim(1);
    std::vector<Tracked> x = tracked_of(c.inputs[0]), y(x.size());
    for (int64_t r = 0; r < R; ++r)
      for (int64_t k = 0; k < K; ++k) y[k * R + r] = round_bf16_point(x[r * K + k]);
    return Reference{y};
  };
  t.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { transpose_to_bf16(in[0], out[0]); };
  t.controls = {
      reimplemented("truncated-rounding", [](auto& in, auto& out, auto&) {
        const int64_t R = in[0].dim(0), K = in[0].dim(1);
        std::vector<double> x = values_of(in[0]), y(x.size());
        for (int64_t r = 0; r < R; ++r)
          for (int64_t k = 0; k < K; ++k)
            y[k * R + r] = std::bit_cast<float>(std::bit_cast<uint32_t>(float(x[r * K + k])) & 0xffff0000u);
        set_values(out[0], y);
      }),
      reimplemented("not-transposed", [](auto& in, auto& out, auto&) {
        std::vector<double> x = values_of(in[0]);
        for (double& v : x) v = bf16_of(v);
        set_values(out[0], x);
      }),
  };
  t.limit_cases = [] {
    Case c;  // a 2048^2 picture's latents
    c.label = label({{"rows", 128}, {"cols", 16384}});
    c.inputs = {shape_only(DType::F32, {128, 16384})};
    c.outputs = {shape_only(DType::BF16, {16384, 128})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(t));

  KernelContract k;
  k.name = "guided_euler_step";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{step_case(rng, 128, 48, 3.0, 0.996f, 0.992f, true), step_case(rng, 16, 33, 4.5, 0.5f, 0.25f, true),
                             step_case(rng, 8, 20, 1.0, 0.024f, 0.0, false), cancelling_case(rng)};
  };
  k.adversarial_cases = [](Rng& rng) {
    // Branches that nearly cancel and a large guidance scale; x far larger than the step.
    Case c = step_case(rng, 4, 64, 12.0, 1.0, 0.953f, true);
    std::vector<double> x = values_of(c.inputs[0]), cv = values_of(c.inputs[1]), u(cv.size());
    for (size_t i = 0; i < u.size(); ++i) u[i] = bf16_of(cv[i] * (1 + std::ldexp(1.0, -7) * (i % 3)));
    for (double& v : x) v *= 1e4;
    c.inputs[0] = host_tensor(DType::F32, {4, 64}, x);
    c.inputs[2] = host_tensor(DType::BF16, {64, 4}, u);
    return std::vector<Case>{c};
  };
  k.reference = [](const Case& c) {
    const int64_t C = c.inputs[0].dim(0), n = c.inputs[0].dim(1);
    std::vector<Tracked> x = tracked_of(c.inputs[0]), cv = tracked_of(c.inputs[1]), u = tracked_of(c.inputs[2]),
                         s = tracked_of(c.inputs[3]);
    const Tracked dt = f32_sub(s[2], s[1]);
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t i = 0; i < n; ++i) {
        Tracked pred = cv[i * C + ch];
        if (c.params[0] != 0) pred = f32_add(u[i * C + ch], f32_mul(s[0], f32_sub(cv[i * C + ch], u[i * C + ch])));
        x[ch * n + i] = f32_add(x[ch * n + i], f32_mul(dt, pred));
      }
    return Reference{x};
  };
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    copy_into(out[0], in[0]);  // in place: run on the output's copy of x
    guided_euler_step(out[0], in[1], p[0] != 0 ? &in[2] : nullptr, in[3]);
  };
  k.controls = {
      reimplemented("branches-swapped", [](auto& in, auto& out, auto& p) { faulty_step(in, out, p, {true}); }),
      reimplemented("dt-reversed", [](auto& in, auto& out, auto& p) { faulty_step(in, out, p, {false, true}); }),
      reimplemented("x-rounded-to-bf16", [](auto& in, auto& out, auto& p) { faulty_step(in, out, p, {false, false, true}); }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = label({{"channels", 128}, {"tokens", 16384}});
    c.inputs = {shape_only(DType::F32, {128, 16384}), shape_only(DType::BF16, {16384, 128}),
                shape_only(DType::BF16, {16384, 128}), shape_only(DType::F32, {3})};
    c.outputs = {shape_only(DType::F32, {128, 16384})};
    c.params = {1.0};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
