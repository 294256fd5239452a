#pragma once
// The rounding model: a float64 reference value together with a proven bound on how far a correct
// kernel's value may lie from it. Every operation says what the kernel does (an fp32 operation, an
// fp32 sum of n terms in any order, a library function with a documented ulp error, a rounding
// point to bf16) and grows the bound by exactly what that operation may contribute.
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace tf::contract {

// Unit roundoff of fp32 round-to-nearest: |fl(x) - x| <= kU32 * |x| for normal results.
inline constexpr double kU32 = 0x1p-24;
// Largest absolute error of one fp32 rounding in the subnormal range (half the smallest subnormal).
inline constexpr double kEta32 = 0x1p-150;
// Slack for the float64 reference's own roundings, per operation and relative to the value.
inline constexpr double kU64 = 0x1p-51;

// A value the kernel computes: `v` is the float64 reference (at the kernel's own rounding points),
// the kernel's value lies in [v - e, v + e].
struct Tracked {
  double v = 0;
  double e = 0;
};

inline Tracked exact(double v) { return {v, 0.0}; }

// Rounding of a float64 to the nearest bf16 / fp16 / fp32 value, ties to even, overflow to infinity.
double bf16_of(double x);
double f16_of(double x);
double tf32_of(double x);  // fp32's range with 11 significant bits (TF32 tensor-core inputs)
inline double f32_of(double x) { return static_cast<double>(static_cast<float>(x)); }
// The spacing of bf16 values at x (one unit in the last place).
double bf16_ulp(double x);

// gamma(n) = n u / (1 - n u): the bound on the relative error of an fp32 sum of n + 1 terms,
// whatever the order (Higham, Accuracy and Stability, Lemma 3.1 and section 4.2).
double gamma32(int64_t n);

// fp32 arithmetic of the kernel on two values (one rounding each).
Tracked f32_add(Tracked a, Tracked b);
Tracked f32_sub(Tracked a, Tracked b);
Tracked f32_mul(Tracked a, Tracked b);
Tracked f32_div(Tracked a, Tracked b);
Tracked f32_neg(Tracked a);

// An fp32 sum of the terms in any order (sequential, pairwise, split over threads or warps).
Tracked f32_sum(std::span<const Tracked> terms);

// How the kernel splits an fp32 value for the bf16 tensor cores: hi = bf16(x), lo = bf16(x - hi)
// (the difference is exact in fp32), both round-to-nearest-even; x - hi - lo is dropped.
struct Bf16Split {
  double hi = 0, lo = 0;
};
Bf16Split bf16_split(double x);

// f32_sum built term by term, for sums whose terms are not all plain values.
class F32Sum {
 public:
  void add(Tracked t);
  // The product a * b as split-bf16 tensor cores form it: hi*hi + hi*lo + lo*hi, three exact fp32
  // terms of the sum (lo*lo and the split's remainders are dropped). An exact operand is split as
  // the kernel splits it; an operand the kernel computed itself is bounded (|x - hi| <= 2^-8 |x|,
  // |x - hi - lo| <= 2^-16 |x|).
  void add_split_bf16_product(Tracked a, Tracked b);
  Tracked result() const;

 private:
  double s_ = 0, c_ = 0, abs_ = 0, e_ = 0;  // Neumaier sum and compensation, sum of |terms|, of errors
  int64_t live_ = 0;                        // terms that are not exact zeros
  void add_value(double v);
};
// An fp32 dot product: each product rounded once, then an fp32 sum in any order.
Tracked f32_dot(std::span<const Tracked> a, std::span<const Tracked> b);

// A monotone or piecewise-monotone function f evaluated by the kernel in fp32 with a relative error
// of at most `budget_u` units of kU32 (plus `abs_u` units of kU32 in absolute terms). The input's
// own uncertainty is carried through f exactly: f is evaluated at the interval's ends and at
// `turning_points` inside it.
template <class F>
Tracked f32_function(Tracked a, F f, double budget_u, double abs_u = 0, std::span<const double> turning_points = {});

// The kernel's library functions in fp32, each with the bound derived in tracked.cpp.
Tracked f32_exp(Tracked a);
Tracked f32_rsqrt(Tracked a);
Tracked f32_sqrt(Tracked a);
Tracked f32_sigmoid(Tracked a);
Tracked f32_silu(Tracked a);
Tracked f32_softplus(Tracked a);  // torch's: x > 20 ? x : log1p(exp(x))
Tracked f32_cos(Tracked a);
Tracked f32_sin(Tracked a);
Tracked f32_tanh(Tracked a);

// A rounding point: the kernel rounds its fp32 value to bf16 (or stores fp32). The reference rounds
// its value the same way; the bound becomes the spread of the rounded interval.
Tracked round_bf16_point(Tracked a);
Tracked round_f32_point(Tracked a);

// Helpers for references that are plain float64 loops.
std::vector<Tracked> exact_values(std::span<const float> xs);

// --- template body ---
namespace detail {
double function_rounding(double y, double dev, double budget_u, double abs_u);
}

template <class F>
Tracked f32_function(Tracked a, F f, double budget_u, double abs_u, std::span<const double> turning_points) {
  double y = f(a.v);
  if (!std::isfinite(y) || !std::isfinite(a.e)) return {y, std::isfinite(y) ? std::numeric_limits<double>::infinity() : 0.0};
  double dev = 0;
  if (a.e > 0) {
    for (double x : {a.v - a.e, a.v + a.e}) dev = std::fmax(dev, std::fabs(f(x) - y));
    for (double t : turning_points)
      if (t > a.v - a.e && t < a.v + a.e) dev = std::fmax(dev, std::fabs(f(t) - y));
    if (std::isnan(dev)) dev = std::numeric_limits<double>::infinity();
  }
  return {y, detail::function_rounding(y, dev, budget_u, abs_u)};
}

}  // namespace tf::contract
