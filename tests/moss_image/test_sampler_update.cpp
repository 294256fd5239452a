// Guidance and the Euler step against float32 values worked out by hand, each chosen so that a
// fused multiply-add, double evaluation or a reordered formula gives a different float.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "families/moss_image/sampler/update.h"
#include "support/error_message.h"

using namespace tf;
using namespace tf::moss_image;
using tf::test_support::error_message;

namespace {

Tensor vec(std::initializer_list<float> v) {
  Tensor t = empty(DType::F32, {static_cast<int64_t>(v.size())});
  int i = 0;
  for (float x : v) t.ptr<float>()[i++] = x;
  return t;
}

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

}  // namespace

// u + g * (c - u) with g = 3: d = fp32(c - u), p = fp32(3 d), fp32(u + p). fma(g, d, u), double
// evaluation and (1 - g) u + g c each land one ulp away (shown alongside).
TEST(SamplerUpdate, GuidanceOpByOpInFloat32) {
  const Tensor c = vec({-0x1.d77bf2p+0f, 0x1.4106b6p-3f, 0x1.8646e8p-1f});
  const Tensor u = vec({-0x1.e17776p-3f, -0x1.7ed5a6p-3f, -0x1.330498p+0f});
  const Tensor p = guided(c, u, 3.0);
  EXPECT_EQ(p.ptr<float>()[0], -0x1.438580p+2f);  // fused or double: -0x1.43857ep+2
  EXPECT_EQ(p.ptr<float>()[1], 0x1.b02fdap-1f);   // fused or double: 0x1.b02fdcp-1
  EXPECT_EQ(p.ptr<float>()[2], 0x1.2bdce2p+2f);   // fused or double: 0x1.2bdce4p+2
  // the scale is rounded to fp32 before the product, as torch rounds a Python float
  const Tensor q = guided(vec({0x1.ed8318p-2f}), vec({-0x1.e88eccp-3f}), 0.1);
  EXPECT_EQ(q.ptr<float>()[0], -0x1.54ffe4p-3f);  // 0.1 kept in double: -0x1.54ffe6p-3
  // g = 1 computes u + (c - u), as the reference's formula would
  const Tensor r = guided(vec({0.1f}), vec({0.3f}), 1.0);
  EXPECT_EQ(r.ptr<float>()[0], 0.3f + (0.1f - 0.3f));
}

// x + (sigma_next - sigma) * v between the default schedule's 0.193 and 0.115: dt = fp32(0.115 -
// 0.193) = -0x1.3f7ceep-4, then dt * v rounded, then the add.
TEST(SamplerUpdate, EulerStepOpByOpInFloat32) {
  Tensor x = vec({0x1.7e67cap-1f, -0x1.52beeep-1f, 0x1.698e2ep-6f});
  const Tensor v = vec({-0x1.d8ea48p+0f, -0x1.ad2438p-1f, 0x1.d67b62p-1f});
  euler_step(x, v, 0.193f, 0.115f);
  EXPECT_EQ(x.ptr<float>()[0], 0x1.c82e20p-1f);   // fused or double: 0x1.c82e22p-1
  EXPECT_EQ(x.ptr<float>()[1], -0x1.3145d4p-1f);  // fused or double: -0x1.3145d6p-1
  EXPECT_EQ(x.ptr<float>()[2], -0x1.966240p-5f);  // fused: -0x1.966242p-5; x + sn v - s v: -0x1.966248p-5
  // the last step lands on sigma 0: x - sigma * v
  Tensor y = vec({1.0f});
  euler_step(y, vec({0.5f}), 0.024f, 0.0f);
  EXPECT_EQ(y.ptr<float>()[0], 1.0f + (0.0f - 0.024f) * 0.5f);
}

TEST(SamplerUpdate, RefusalsNameTheArgument) {
  const Tensor a = vec({1, 2}), b = vec({1, 2, 3});
  const Tensor h = zeros(DType::BF16, {2});
  EXPECT_TRUE(contains(error_message([&] { guided(a, b, 3.0); }), "expected uncond of cond's shape [2]"));
  EXPECT_TRUE(contains(error_message([&] { guided(h, a, 3.0); }), "expected cond a CPU F32 tensor"));
  EXPECT_TRUE(contains(error_message([&] { guided(a, a, std::nan("")); }), "expected a finite guidance scale"));
  Tensor x = vec({1, 2});
  EXPECT_TRUE(contains(error_message([&] { euler_step(x, b, 1.0f, 0.5f); }), "expected v of x's shape [2]"));
  EXPECT_TRUE(contains(error_message([&] { euler_step(x, h, 1.0f, 0.5f); }), "expected v a CPU F32 tensor"));
  EXPECT_TRUE(contains(error_message([&] { euler_step(x, a, INFINITY, 0.5f); }), "expected finite sigmas"));
}
