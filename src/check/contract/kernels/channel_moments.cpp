// channel_moments: per channel (sum, sum of squares) of fp32 values in double.
// Rounding model: each square is exact in double; each of the two is a double sum of n terms in any
// order, within gamma64(n) = n u / (1 - n u), u = 2^-53, of the sum of the terms' magnitudes. An fp32
// accumulator (2^-24 a step) lies far outside; so does one value left out.
#include "backend/norm/channel_moments.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"

namespace tf::contract {

namespace {

Case make_case(Tensor x, std::string what) {
  Case c;
  c.label = what + " " + shape_str(x.shape);
  c.outputs = {host_empty(DType::F64, {x.dim(0), 2})};
  c.inputs = {std::move(x)};
  return c;
}

Case offset_case(Rng& rng, Shape s, double offset, double sigma) {
  std::vector<double> v(static_cast<size_t>(shape_numel(s)));
  for (double& x : v) x = offset + sigma * rng.normal();
  return make_case(host_tensor(DType::F32, s, v), "offset " + std::to_string(offset));
}

Reference moments_reference(const Case& c) {
  const std::vector<double> x = values_of(c.inputs[0]);
  const int64_t C = c.inputs[0].dim(0), n = C > 0 ? static_cast<int64_t>(x.size()) / C : 0;
  const double g = static_cast<double>(n) * 0x1p-53 / (1 - static_cast<double>(n) * 0x1p-53);
  std::vector<Tracked> m(static_cast<size_t>(2 * C));
  for (int64_t ch = 0; ch < C; ++ch) {
    long double s = 0, ss = 0, a = 0;
    for (int64_t i = 0; i < n; ++i) {
      const long double v = x[ch * n + i];
      s += v, ss += v * v, a += std::fabs(v);
    }
    m[2 * ch] = {static_cast<double>(s), g * static_cast<double>(a) + kU64 * std::fabs(static_cast<double>(s))};
    m[2 * ch + 1] = {static_cast<double>(ss), g * static_cast<double>(ss) + kU64 * static_cast<double>(ss)};
  }
  return {m};
}

// The sums in an fp32 accumulator.
void fp32_accumulator(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) {
  const std::vector<double> x = values_of(in[0]);
  const int64_t C = in[0].dim(0), n = C > 0 ? static_cast<int64_t>(x.size()) / C : 0;
  std::vector<double> m(static_cast<size_t>(2 * C));
  for (int64_t ch = 0; ch < C; ++ch) {
    float s = 0, ss = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float v = static_cast<float>(x[ch * n + i]);
      s += v, ss += v * v;
    }
    m[2 * ch] = s, m[2 * ch + 1] = ss;
  }
  set_values(out[0], m);
}

}  // namespace

void register_channel_moments(bool cuda) {
  KernelContract k;
  k.name = "channel_moments";
  k.families = {"flux2_vae"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    std::vector<Case> cs;
    for (Shape s : {Shape{3, 5, 7}, Shape{96, 33, 40}, Shape{7, 4099}, Shape{1, 1}})
      cs.push_back(make_case(random_normal(rng, DType::F32, s), "random"));
    return cs;
  };
  k.adversarial_cases = [](Rng& rng) {
    // A mean far above the spread (the sums of squares that GroupNorm's variance cancels), huge and tiny values.
    return std::vector<Case>{offset_case(rng, {4, 3000}, 3000.0, 0.01), offset_case(rng, {3, 2000}, 0.0, 0x1p60),
                             offset_case(rng, {3, 2000}, 0.0, 0x1p-60)};
  };
  k.reference = moments_reference;
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { channel_moments(in[0], out[0]); };
  k.controls = {
      reimplemented("fp32-accumulator", fp32_accumulator),
      perturbed_inputs("one-value-left-out", [](std::vector<Tensor>& in) {
        std::vector<double> v = values_of(in[0]);
        v.back() = 0;
        set_values(in[0], v);
      }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = "192 x 1024^2";
    c.inputs = {shape_only(DType::F32, {192, 1024, 1024})};
    c.outputs = {shape_only(DType::F64, {192, 2})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
