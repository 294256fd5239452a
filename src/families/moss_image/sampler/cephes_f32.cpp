#include "families/moss_image/sampler/cephes_f32.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tf::moss_image {
namespace {

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// The constants are the vector code's float literals, rounded to fp32 as its tables store them.
constexpr float kSqrtHalf = 0.707106781186547524f;
constexpr float kLogP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                            -1.2420140846E-1f, +1.4249322787E-1f, -1.6668057665E-1f,
                            +2.0000714765E-1f, -2.4999993993E-1f, +3.3333331174E-1f};
constexpr float kLogQ1 = -2.12194440e-4f;
constexpr float kLogQ2 = 0.693359375f;
constexpr float kMinusDP1 = -0.78515625f;
constexpr float kMinusDP2 = -2.4187564849853515625e-4f;
constexpr float kMinusDP3 = -3.77489497744594108e-8f;
constexpr float kSinP[3] = {-1.9515295891E-4f, 8.3321608736E-3f, -1.6666654611E-1f};
constexpr float kCosP[3] = {2.443315711809948E-005f, -1.388731625493765E-003f, 4.166664568298827E-002f};
constexpr float kFourOverPi = 1.27323954473516f;

}  // namespace

float torch_log_f32(float x) {
  const bool invalid = !(x > 0.0f);  // the vector code ORs NaN bits into lanes with x <= 0
  x = std::fmax(x, from_bits(0x00800000u));  // denormals cut to the smallest normal
  int32_t e_int = static_cast<int32_t>(bits(x) >> 23) - 0x7f;
  // mantissa in [0.5, 1): exponent bits cleared, then 0.5's ORed in
  x = from_bits((bits(x) & ~0x7f800000u) | bits(0.5f));
  float e = static_cast<float>(e_int) + 1.0f;
  const bool below = x < kSqrtHalf;
  const float tmp = below ? x : 0.0f;
  x = x - 1.0f;
  e = e - (below ? 1.0f : 0.0f);
  x = x + tmp;
  const float z = x * x;
  float y = kLogP[0];
  for (int k = 1; k < 9; ++k) y = std::fma(y, x, kLogP[k]);  // y*x + p_k contracted
  y = y * x;
  y = std::fma(y, z, e * kLogQ1);  // y*z fused into the add; e*q1 stays a product
  y = y - z * 0.5f;                // z * 0.5 is exact, fused or not
  x = x + y;
  x = std::fma(e, kLogQ2, x);      // (x + y) + e*q2 contracted
  return invalid ? from_bits(bits(x) | 0xffffffffu) : x;
}

void torch_sincos_f32(float x, float* s, float* c) {
  uint32_t sign_sin = bits(x) & 0x80000000u;
  x = std::fabs(x);
  float y = x * kFourOverPi;
  int32_t j = static_cast<int32_t>(y);  // cvttps: truncation
  j = (j + 1) & ~1;                     // round the octant up to even (Cephes)
  y = static_cast<float>(j);
  const uint32_t swap_sin = static_cast<uint32_t>(j & 4) << 29;
  const bool sin_poly = (j & 2) == 0;  // the sine's polynomial for the sine in these octants
  const uint32_t sign_cos = static_cast<uint32_t>(~(j - 2) & 4) << 29;
  // extended-precision reduction x - y*pi/4 in three parts, each product fused into its add
  x = std::fma(y, kMinusDP1, x);
  x = std::fma(y, kMinusDP2, x);
  x = std::fma(y, kMinusDP3, x);
  sign_sin ^= swap_sin;

  const float z = x * x;
  float yc = std::fma(kCosP[0], z, kCosP[1]);
  yc = std::fma(yc, z, kCosP[2]);
  yc = yc * z;
  yc = std::fma(yc, z, -(z * 0.5f));  // the second *z fused into the subtraction of z/2
  yc = yc + 1.0f;

  float ys = std::fma(kSinP[0], z, kSinP[1]);
  ys = std::fma(ys, z, kSinP[2]);
  ys = ys * z;
  ys = std::fma(ys, x, x);

  // the vector code selects by masking and then adds and subtracts the masked values; the same
  // arithmetic here keeps its zero signs
  const float ysin2 = sin_poly ? ys : 0.0f;
  const float ysin1 = sin_poly ? 0.0f : yc;
  ys = ys - ysin2;
  yc = yc - ysin1;
  *s = from_bits(bits(ysin1 + ysin2) ^ sign_sin);
  *c = from_bits(bits(yc + ys) ^ sign_cos);
}

}  // namespace tf::moss_image
