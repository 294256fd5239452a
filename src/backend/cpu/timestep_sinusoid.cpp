// timestep_sinusoid on the CPU: float64 as the reference, then f64 -> f32 -> bf16.
#include <cmath>

#include "backend/embed/timestep_sinusoid.h"
#include "core/bf16.h"

namespace tf::cpu {

void timestep_sinusoid(const Tensor& sigma, float scale, double max_period, Tensor& e) {
  const int64_t n = sigma.dim(0), dim = e.dim(1), half = dim / 2;
  uint16_t* p = e.ptr<uint16_t>();
  for (int64_t r = 0; r < n; ++r) {
    const float t = sigma.ptr<const float>()[r] * scale;
    for (int64_t k = 0; k < half; ++k) {
      const double phase = static_cast<double>(t) * std::pow(max_period, -static_cast<double>(k) / static_cast<double>(half));
      p[r * dim + k] = bf16_bits_from_float(static_cast<float>(std::cos(phase)));
      p[r * dim + half + k] = bf16_bits_from_float(static_cast<float>(std::sin(phase)));
    }
  }
}

}  // namespace tf::cpu
