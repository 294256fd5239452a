#include "families/moss_image/sampler/schedule.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"

namespace tf::moss_image {
namespace {

std::string num(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

}  // namespace

std::vector<float> torch_linspace_f32(float start, float end, int64_t count) {
  // past 2^24 the fp32 index would no longer be exact
  require(count >= 1 && count <= (int64_t{1} << 24),
          "torch_linspace_f32: expected count in [1, 2^24], got " + std::to_string(count));
  if (count == 1) return {start};
  // (end - start) / (count - 1), the count converted to fp32 as float / int64 does
  const float step = (end - start) / static_cast<float>(count - 1);
  const int64_t halfway = count / 2;
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    // torch's build contracts start + step * i into one fused multiply-add
    out[static_cast<size_t>(i)] = i < halfway
        ? std::fma(step, static_cast<float>(i), start)
        : std::fma(-step, static_cast<float>(count - 1 - i), end);
  }
  return out;
}

std::vector<float> shifted_sigmas(int64_t count, double shift) {
  require(std::isfinite(shift) && shift > 0.0,
          "shifted_sigmas: expected shift finite and > 0, got " + num(shift));
  const double total = static_cast<double>(kTrainingSteps);
  // a Python float expression: (total + shift) - 1 and the division in double
  const double lower = shift / (total + shift - 1.0);
  std::vector<float> s = torch_linspace_f32(1.0f, static_cast<float>(lower), count);
  if (shift == 1.0) return s;  // the reference returns the grid untouched
  const float a = static_cast<float>(shift);
  const float b = static_cast<float>(shift - 1.0);  // formed in double, then rounded as a scalar
  for (float& x : s) x = (a * x) / (1.0f + b * x);
  return s;
}

std::vector<float> schedule_sigmas(int64_t steps, double shift) {
  require(steps >= 1 && steps <= kMaxSampleSteps,
          "schedule_sigmas: expected steps in [1, " + std::to_string(kMaxSampleSteps) + "], got " +
              std::to_string(steps));
  require(std::isfinite(shift) && shift > 0.0,
          "schedule_sigmas: expected shift finite and > 0, got " + num(shift));
  const std::vector<float> sigmas = shifted_sigmas(steps, shift);
  std::vector<float> training = shifted_sigmas(kTrainingSteps, 1.0);
  std::reverse(training.begin(), training.end());  // ascending, as searchsorted needs

  std::vector<float> out;
  out.reserve(sigmas.size() + 1);
  for (float s : sigmas) {
    // searchsorted(side="left"): the first training sigma >= s, clamped to the last index
    int64_t upper = std::lower_bound(training.begin(), training.end(), s) - training.begin();
    upper = std::min<int64_t>(upper, kTrainingSteps - 1);
    const int64_t lower = std::max<int64_t>(upper - 1, 0);
    const float below = training[static_cast<size_t>(lower)];
    const float above = training[static_cast<size_t>(upper)];
    // the reference compares fp32 distances and prefers the lower neighbour on a tie
    const float snapped = std::fabs(s - below) <= std::fabs(above - s) ? below : above;
    if (out.empty() || out.back() != snapped) out.push_back(snapped);  // unique_consecutive
  }
  out.push_back(0.0f);
  return out;
}

std::vector<float> schedule_timesteps(const std::vector<float>& sigmas) {
  require(!sigmas.empty(), "schedule_timesteps: expected the sigmas with their final 0, got none");
  std::vector<float> t(sigmas.begin(), sigmas.end() - 1);
  for (float& x : t) x = x * static_cast<float>(kTrainingSteps);  // fp32(sigma * 1000)
  return t;
}

}  // namespace tf::moss_image
