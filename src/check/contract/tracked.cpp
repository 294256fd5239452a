#include "check/contract/tracked.h"

#include <algorithm>
#include <numbers>
#include <utility>

namespace tf::contract {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Round to `bits` significant bits, ties to even, with subnormal spacing `min_quantum` and
// overflow to infinity above `max_finite`.
double round_to_format(double x, int bits, double min_quantum, double max_finite) {
  if (x == 0 || !std::isfinite(x)) return x;
  int ex = 0;
  std::frexp(x, &ex);  // |x| = m * 2^ex, m in [0.5, 1)
  double quantum = std::fmax(std::ldexp(1.0, ex - bits), min_quantum);
  double r = std::nearbyint(x / quantum) * quantum;
  if (std::fabs(r) > max_finite) return std::copysign(kInf, x);
  return r;
}

// The bound after one fp32 rounding of a result whose inputs already carry `e_in`.
double after_rounding(double v, double e_in) {
  return e_in + kU32 * (std::fabs(v) + e_in) + kEta32 + kU64 * std::fabs(v);
}

// The bound after a rounding point: the spread of the rounded interval around the rounded value.
template <class Round>
Tracked rounding_point(Tracked a, Round round) {
  double r = round(a.v);
  if (std::isnan(a.v)) return {a.v, 0.0};
  if (!std::isfinite(a.e)) return {r, kInf};
  double lo = round(a.v - a.e), hi = round(a.v + a.e);
  if (!std::isfinite(r)) return {r, (lo == r && hi == r) ? 0.0 : kInf};
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {r, kInf};
  return {r, std::fmax(hi - r, r - lo)};
}

}  // namespace

double bf16_of(double x) { return round_to_format(x, 8, 0x1p-133, 0x1.fep127); }
double f16_of(double x) { return round_to_format(x, 11, 0x1p-24, 65504.0); }
double tf32_of(double x) { return round_to_format(x, 11, 0x1p-136, 0x1.ffcp127); }

double bf16_ulp(double x) {
  if (x == 0 || !std::isfinite(x)) return 0x1p-133;
  int ex = 0;
  std::frexp(x, &ex);
  return std::fmax(std::ldexp(1.0, ex - 8), 0x1p-133);
}

double gamma32(int64_t n) {
  if (n <= 0) return 0;
  double nu = static_cast<double>(n) * kU32;
  return nu < 1 ? nu / (1 - nu) : kInf;
}

Tracked f32_add(Tracked a, Tracked b) {
  double s = a.v + b.v;
  // Two-sum: the exact error of the float64 addition; zero means s is the exact sum.
  double bb = s - a.v;
  double err = (a.v - (s - bb)) + (b.v - bb);
  if (a.e == 0 && b.e == 0 && err == 0 && f32_of(s) == s) return {s, 0.0};
  return {s, after_rounding(s, a.e + b.e)};
}

Tracked f32_sub(Tracked a, Tracked b) { return f32_add(a, f32_neg(b)); }

Tracked f32_neg(Tracked a) { return {-a.v, a.e}; }

Tracked f32_mul(Tracked a, Tracked b) {
  double p = a.v * b.v;
  if (a.e == 0 && b.e == 0 && std::fma(a.v, b.v, -p) == 0 && f32_of(p) == p) return {p, 0.0};
  double e_in = std::fabs(a.v) * b.e + std::fabs(b.v) * a.e + a.e * b.e;
  return {p, after_rounding(p, e_in)};
}

Tracked f32_div(Tracked a, Tracked b) {
  double q = a.v / b.v;
  if (a.e == 0 && b.e == 0 && std::isfinite(q) && std::fma(q, b.v, -a.v) == 0 && f32_of(q) == q) return {q, 0.0};
  double bm = std::fabs(b.v);
  if (!(b.e < bm)) return {q, kInf};
  double e_in = (std::fabs(a.v) * b.e + bm * a.e) / (bm * (bm - b.e));
  return {q, after_rounding(q, e_in)};
}

void F32Sum::add_value(double v) {
  // Neumaier's compensated sum keeps the float64 reference exact to a few units of 2^-53.
  double y = s_ + v;
  c_ += std::fabs(s_) >= std::fabs(v) ? (s_ - y) + v : (v - y) + s_;
  s_ = y;
}

void F32Sum::add(Tracked t) {
  add_value(t.v);
  abs_ += std::fabs(t.v);
  e_ += t.e;
  if (t.v != 0 || t.e != 0) ++live_;  // adding an exact zero is exact
}

void F32Sum::add_split_bf16_product(Tracked a, Tracked b) {
  if (a.e == 0 && b.e == 0) {
    Bf16Split x = bf16_split(a.v), y = bf16_split(b.v);
    for (auto [p, q] : {std::pair{x.hi, y.hi}, {x.hi, y.lo}, {x.lo, y.hi}}) add(f32_mul(exact(p), exact(q)));
    return;
  }
  // Bounds for a part the kernel split from its own value: bf16 rounding is 2^-8 relative, or
  // 2^-134 absolute among bf16's subnormals.
  constexpr double kHi = 0x1p-8, kRest = 0x1p-16, kTiny = 0x1p-133;
  const double am = std::fabs(a.v) + a.e, bm = std::fabs(b.v) + b.e;
  auto one_exact = [&](double exact_v, Tracked other, double other_max) {
    // hi_e (O - r_O) + lo_e (O - d_O) = (hi_e + lo_e) O - hi_e r_O - lo_e d_O
    Bf16Split x = bf16_split(exact_v);
    const double known = x.hi + x.lo;
    add_value(known * other.v);
    e_ += std::fabs(known) * other.e + (std::fabs(x.hi) * kRest + std::fabs(x.lo) * kHi) * other_max +
          (std::fabs(x.hi) + std::fabs(x.lo)) * kTiny;
    abs_ += (std::fabs(x.hi) + std::fabs(x.lo)) * other_max * (1 + 2 * kHi);
  };
  if (a.e == 0) {
    one_exact(a.v, b, bm);
  } else if (b.e == 0) {
    one_exact(b.v, a, am);
  } else {
    // (A - r_A)(B - r_B) - lo_A lo_B: at most 3 * 2^-16 |A B| from A B, plus the subnormal floors.
    add_value(a.v * b.v);
    e_ += std::fabs(a.v) * b.e + std::fabs(b.v) * a.e + a.e * b.e + 3 * kRest * am * bm * (1 + kHi) +
          2 * kTiny * (am + bm);
    abs_ += am * bm * (1 + 2 * kHi);
  }
  live_ += 3;
}

Tracked F32Sum::result() const {
  double s = s_ + c_;
  if (live_ <= 1) return {s, e_};
  return {s, e_ + gamma32(live_ - 1) * (abs_ + e_) + static_cast<double>(live_ - 1) * kEta32 + kU64 * abs_};
}

Tracked f32_sum(std::span<const Tracked> terms) {
  F32Sum sum;
  for (const Tracked& t : terms) sum.add(t);
  return sum.result();
}

Bf16Split bf16_split(double x) {
  const double hi = bf16_of(x);
  return {hi, std::isfinite(hi) ? bf16_of(f32_of(x - hi)) : 0.0};
}

Tracked f32_dot(std::span<const Tracked> a, std::span<const Tracked> b) {
  std::vector<Tracked> products(a.size());
  for (size_t i = 0; i < a.size(); ++i) products[i] = f32_mul(a[i], b[i]);
  return f32_sum(products);
}

namespace detail {
double function_rounding(double y, double dev, double budget_u, double abs_u) {
  // In the subnormal range an ulp is 2^-149 absolute: the same budget in half-ulps of 2^-149.
  return dev + budget_u * kU32 * (std::fabs(y) + dev) + abs_u * kU32 + budget_u * kEta32 + kU64 * std::fabs(y);
}
}  // namespace detail

// Budgets in units of kU32 (one ulp is at most 2 kU32 relative). The largest errors documented for
// CUDA's fp32 functions (CUDA C++ Programming Guide, "Mathematical Functions": expf 2 ulp, rsqrtf
// 2 ulp, sinf/cosf 2 ulp, log1pf 1 ulp, sqrtf and division correctly rounded) cover glibc's
// (<= 1 ulp) too.
Tracked f32_exp(Tracked a) {
  if (a.v == 0 && a.e == 0) return exact(1.0);  // exp(0) = 1 exactly in every libm and in CUDA
  return f32_function(a, [](double x) { return std::exp(x); }, 4);
}

Tracked f32_rsqrt(Tracked a) {
  // rsqrtf: 2 ulp; 1 / sqrtf(x): two correctly rounded operations.
  return f32_function(a, [](double x) { return 1 / std::sqrt(x); }, 4);
}

Tracked f32_sqrt(Tracked a) {
  return f32_function(a, [](double x) { return std::sqrt(x); }, 1);
}

namespace {
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
}  // namespace

// Below -88.72, exp(-x) overflows fp32: 1 / (1 + inf) and x / (1 + inf) give 0 (torch's own
// formula does), an absolute error of the whole (tiny) value.
Tracked overflow_to_zero(Tracked a, Tracked y) {
  if (a.v - a.e < -88.72) y.e = std::fmax(y.e, std::fabs(y.v) + y.e);
  return y;
}

Tracked f32_sigmoid(Tracked a) {
  // 1 / (1 + exp(-x)): exp 4u, the add 1u, the division 1u = 6u; exp(x) / (1 + exp(x)) for
  // negative x: 4u + 5u + 1u = 10u.
  return overflow_to_zero(a, f32_function(a, sigmoid, 10));
}

Tracked f32_silu(Tracked a) {
  // x * sigmoid(x): 10u + 1u; x / (1 + exp(-x)): 6u. silu has one minimum, at x = -1.2784645...
  static const double turning[] = {-1.2784645427610738};
  return overflow_to_zero(a, f32_function(a, [](double x) { return x * sigmoid(x); }, 11, 0, turning));
}

Tracked f32_softplus(Tracked a) {
  // log1p(exp(x)): exp's 4u passes through with a factor <= 1, log1pf adds 2u; log(1 + exp(x))
  // adds one absolute u from rounding 1 + exp(x). Above 20 torch returns x itself.
  return f32_function(a, [](double x) { return x > 20 ? x : std::log1p(std::exp(x)); }, 6, 1);
}

namespace {
// Extrema of cos (multiples of pi) or sin (pi/2 + multiples of pi) inside (lo, hi), at most two.
std::vector<double> trig_turning_points(Tracked a, double offset) {
  std::vector<double> t;
  if (!(a.e > 0) || !std::isfinite(a.e) || a.e > 4) return t;
  double k = std::ceil((a.v - a.e - offset) / std::numbers::pi);
  for (int i = 0; i < 3; ++i) t.push_back(offset + (k + i) * std::numbers::pi);
  return t;
}
}  // namespace

Tracked f32_tanh(Tracked a) {
  // glibc's tanhf is within 2 ulp (4u); tanh is monotone, so the interval's ends bound it.
  return f32_function(a, [](double x) { return std::tanh(x); }, 4);
}

Tracked f32_cos(Tracked a) {
  if (a.e > 4) return {std::cos(a.v), 2.0};
  auto t = trig_turning_points(a, 0);
  return f32_function(a, [](double x) { return std::cos(x); }, 4, 0, t);
}

Tracked f32_sin(Tracked a) {
  if (a.e > 4) return {std::sin(a.v), 2.0};
  auto t = trig_turning_points(a, std::numbers::pi / 2);
  return f32_function(a, [](double x) { return std::sin(x); }, 4, 0, t);
}

Tracked round_bf16_point(Tracked a) { return rounding_point(a, bf16_of); }
Tracked round_f32_point(Tracked a) { return rounding_point(a, f32_of); }

std::vector<Tracked> exact_values(std::span<const float> xs) {
  std::vector<Tracked> out(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) out[i] = exact(xs[i]);
  return out;
}

}  // namespace tf::contract
