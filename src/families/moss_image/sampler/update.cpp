#include "families/moss_image/sampler/update.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace tf::moss_image {
namespace {

void expect_cpu_f32(const Tensor& t, const char* fn, const char* arg) {
  require(t.dtype == DType::F32 && t.device == Device::CPU && t.defined(),
          std::string(fn) + ": expected " + arg + " a CPU F32 tensor, got " + t.describe());
}

void expect_same_shape(const Tensor& a, const Tensor& b, const char* fn, const char* an, const char* bn) {
  require(a.shape == b.shape, std::string(fn) + ": expected " + bn + " of " + an + "'s shape " +
                                  shape_str(a.shape) + ", got " + shape_str(b.shape));
}

}  // namespace

Tensor guided(const Tensor& cond, const Tensor& uncond, double g) {
  expect_cpu_f32(cond, "guided", "cond");
  expect_cpu_f32(uncond, "guided", "uncond");
  expect_same_shape(cond, uncond, "guided", "cond", "uncond");
  require(std::isfinite(g), "guided: expected a finite guidance scale, got " + std::to_string(g));
  const float gf = static_cast<float>(g);  // torch rounds the Python float to the tensor's fp32
  Tensor out = empty(DType::F32, cond.shape);
  const float* c = cond.ptr<float>();
  const float* u = uncond.ptr<float>();
  float* o = out.ptr<float>();
  for (int64_t i = 0, n = out.numel(); i < n; ++i) {
    const float d = c[i] - u[i];
    const float p = gf * d;
    o[i] = u[i] + p;
  }
  return out;
}

void euler_step(Tensor& x, const Tensor& v, float sigma, float sigma_next) {
  expect_cpu_f32(x, "euler_step", "x");
  expect_cpu_f32(v, "euler_step", "v");
  expect_same_shape(x, v, "euler_step", "x", "v");
  require(std::isfinite(sigma) && std::isfinite(sigma_next),
          "euler_step: expected finite sigmas, got " + std::to_string(sigma) + " and " +
              std::to_string(sigma_next));
  const float dt = sigma_next - sigma;  // the 0-dim fp32 difference the reference forms first
  float* xp = x.ptr<float>();
  const float* vp = v.ptr<float>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    const float step = dt * vp[i];
    xp[i] = xp[i] + step;
  }
}

}  // namespace tf::moss_image
