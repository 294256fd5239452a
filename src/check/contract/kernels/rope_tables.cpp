// make_rope_tables (host, fp32 as transformers' default rope):
//   inv_freq[j] = 1 / pow(theta, 2j / rotary_dim);  angle = pos * inv_freq[j];  cos, sin -> bf16.
// pow is budgeted like CUDA's powf (4 ulp = 8u), which covers glibc's.
#include "backend/rope/rope_tables.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// params: positions, rotary_dim, theta
Case make_case(int64_t positions, int64_t rotary_dim, double theta) {
  Case c;
  c.label = label({{"positions", positions}, {"rotary_dim", rotary_dim}}) + " theta=" + std::to_string(theta);
  c.outputs = {host_empty(DType::BF16, {positions, rotary_dim / 2}), host_empty(DType::BF16, {positions, rotary_dim / 2})};
  c.params = {static_cast<double>(positions), static_cast<double>(rotary_dim), theta};
  return c;
}

// fault: 1 sin and cos swapped, 2 exponent j / rotary_dim (a missing factor 2), 3 positions from 1.
void faulty_tables(std::vector<Tensor>& out, const Params& p, int fault) {
  const int64_t positions = static_cast<int64_t>(p[0]), rotary = static_cast<int64_t>(p[1]), half = rotary / 2;
  std::vector<double> c(positions * half), s(positions * half);
  for (int64_t j = 0; j < half; ++j) {
    float e = static_cast<float>(fault == 2 ? j : 2 * j) / static_cast<float>(rotary);
    float inv = 1.0f / std::pow(static_cast<float>(p[2]), e);
    for (int64_t pos = 0; pos < positions; ++pos) {
      float a = static_cast<float>(fault == 3 ? pos + 1 : pos) * inv;
      c[pos * half + j] = fault == 1 ? std::sin(a) : std::cos(a);
      s[pos * half + j] = fault == 1 ? std::cos(a) : std::sin(a);
    }
  }
  set_values(out[0], c);
  set_values(out[1], s);
}

HostKernel with(int fault) {
  return [fault](const std::vector<Tensor>&, std::vector<Tensor>& out, const Params& p) { faulty_tables(out, p, fault); };
}

}  // namespace

void register_rope_tables() {
  KernelContract k;
  k.name = "rope_tables";
  k.families = {"moss_image"};
  k.backends = {Device::CPU};  // computed once on the host, whatever the device
  k.random_cases = [](Rng&) { return std::vector<Case>{make_case(65, 64, 1e7), make_case(64, 16, 1e4), make_case(1, 2, 1e7)}; };
  k.adversarial_cases = [](Rng&) { return std::vector<Case>{make_case(4096, 64, 1e7)}; };  // large angles
  k.reference = [](const Case& c) {
    const int64_t positions = static_cast<int64_t>(c.params[0]), rotary = static_cast<int64_t>(c.params[1]), half = rotary / 2;
    const double theta = f32_of(c.params[2]);
    std::vector<Tracked> cs(positions * half), sn(positions * half);
    for (int64_t j = 0; j < half; ++j) {
      Tracked e = f32_div(exact(static_cast<double>(2 * j)), exact(static_cast<double>(rotary)));
      Tracked inv = f32_div(exact(1.0), f32_function(e, [theta](double x) { return std::pow(theta, x); }, 8));
      for (int64_t pos = 0; pos < positions; ++pos) {
        Tracked a = f32_mul(exact(static_cast<double>(pos)), inv);
        cs[pos * half + j] = round_bf16_point(f32_cos(a));
        sn[pos * half + j] = round_bf16_point(f32_sin(a));
      }
    }
    return Reference{cs, sn};
  };
  k.run = [](const std::vector<Tensor>&, std::vector<Tensor>& out, const Params& p) {
    RopeTables t = make_rope_tables(static_cast<int64_t>(p[0]), static_cast<int64_t>(p[1]), p[2]);
    copy_into(out[0], t.cos);
    copy_into(out[1], t.sin);
  };
  k.controls = {reimplemented("sin-cos-swapped", with(1)), reimplemented("exponent-missing-factor-2", with(2)),
                reimplemented("positions-from-1", with(3))};
  add_kernel(std::move(k));
}

}  // namespace tf::contract
