#include "families/moss_image/sampler/noise.h"

#include <cmath>
#include <numbers>
#include <random>
#include <string>

#include "core/error.h"
#include "families/moss_image/sampler/cephes_f32.h"

namespace tf::moss_image {
namespace {

// torch's CPU generator: std::mt19937 is specified bit for bit by the standard, and torch's
// at::mt19937 is the same engine seeded the same way (low 32 bits of the seed).
using Engine = std::mt19937;

constexpr int64_t kMaxElements = int64_t{1} << 32;

// uniform_real_distribution<float>(0, 1): the low 24 bits of one 32-bit draw, times 2^-24 (exact).
float uniform24(Engine& g) { return static_cast<float>(g() & 0xFFFFFFu) * 0x1p-24f; }

// uniform_real_distribution<double>(0, 1): a 64-bit draw (first draw high), low 53 bits * 2^-53.
double uniform53(Engine& g) {
  const uint64_t hi = g();
  const uint64_t lo = g();
  return static_cast<double>(((hi << 32) | lo) & ((uint64_t{1} << 53) - 1)) * 0x1p-53;
}

// normal_fill_16_AVX2 on one lane pair: 16 uniforms in place -> 16 normals.
void box_muller16(float* d) {
  const float two_pi = static_cast<float>(2.0f * std::numbers::pi);  // _mm256_set1_ps(2.0f * pi<double>)
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - d[j];  // [0, 1) -> (0, 1] for the log
    const float u2 = d[j + 8];
    const float radius = std::sqrt(-2.0f * torch_log_f32(u1));
    float s, c;
    torch_sincos_f32(two_pi * u2, &s, &c);
    // torch stores fmadd(n, std = 1, mean = 0): n itself, except that -0 becomes +0
    d[j] = std::fma(radius * c, 1.0f, 0.0f);
    d[j + 8] = std::fma(radius * s, 1.0f, 0.0f);
  }
}

// normal_fill: all uniforms first, then blocks of 16; a ragged end redraws the last 16.
void fill_vectorised(float* d, int64_t n, Engine& g) {
  for (int64_t i = 0; i < n; ++i) d[i] = uniform24(g);
  for (int64_t i = 0; i + 16 <= n; i += 16) box_muller16(d + i);
  if (n % 16 != 0) {
    float* tail = d + n - 16;  // overlaps the last full block: torch recomputes it from fresh draws
    for (int i = 0; i < 16; ++i) tail[i] = uniform24(g);
    box_muller16(tail);
  }
}

// at::normal_distribution<double> per element, the generator caching the sine half of each pair.
void fill_scalar(float* d, int64_t n, Engine& g) {
  bool have_cached = false;
  double cached = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double v;
    if (have_cached) {
      v = cached;
      have_cached = false;
    } else {
      const double u1 = uniform53(g);
      const double u2 = uniform53(g);
      const double r = std::sqrt(-2.0 * std::log1p(-u2));
      const double theta = 2.0 * std::numbers::pi * u1;
      cached = r * std::sin(theta);
      have_cached = true;
      v = r * std::cos(theta);
    }
    d[i] = static_cast<float>(v * 1.0 + 0.0);  // transformation::normal(v, mean 0, std 1)
  }
}

}  // namespace

Tensor torch_randn_f32(const Shape& shape, uint64_t seed) {
  int64_t count = 1;
  for (int64_t s : shape) {
    require(s >= 0, "torch_randn_f32: expected non-negative sizes, got shape " + shape_str(shape));
    // a bound that no latent comes near keeps the element count from overflowing
    require(s == 0 || count <= kMaxElements / s,
            "torch_randn_f32: expected at most 2^32 elements, got shape " + shape_str(shape));
    count *= s;
  }
  Tensor out = empty(DType::F32, shape);
  const int64_t n = out.numel();
  Engine g(static_cast<uint32_t>(seed));  // torch seeds its MT19937 with the low 32 bits only
  if (n >= 16)
    fill_vectorised(out.ptr<float>(), n, g);
  else
    fill_scalar(out.ptr<float>(), n, g);
  return out;
}

}  // namespace tf::moss_image
