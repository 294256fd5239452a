#include "backend/rope/rope_tables.h"

#include <cmath>

#include "core/bf16.h"
#include "core/error.h"

namespace tf {

RopeTables make_rope_tables(int64_t positions, int64_t rotary_dim, double theta) {
  require(positions >= 0, "rope tables: negative position count");
  require(rotary_dim >= 2 && rotary_dim % 2 == 0, "rope tables: rotary_dim " + std::to_string(rotary_dim) +
                                                      " must be even and at least 2");
  require(theta > 0, "rope tables: theta must be positive");
  int64_t half = rotary_dim / 2;
  RopeTables t{empty(DType::BF16, {positions, half}), empty(DType::BF16, {positions, half})};
  auto* c = t.cos.ptr<uint16_t>();
  auto* s = t.sin.ptr<uint16_t>();
  const float base = static_cast<float>(theta);
  for (int64_t j = 0; j < half; ++j) {
    float exponent = static_cast<float>(2 * j) / static_cast<float>(rotary_dim);
    float inv_freq = 1.0f / std::pow(base, exponent);
    for (int64_t p = 0; p < positions; ++p) {
      float angle = static_cast<float>(p) * inv_freq;
      c[p * half + j] = bf16_bits_from_float(std::cos(angle));
      s[p * half + j] = bf16_bits_from_float(std::sin(angle));
    }
  }
  return t;
}

RopeTables make_rope_tables(const Tensor& positions, const Tensor& bands) {
  require(positions.device == Device::CPU && positions.dtype == DType::F32 && positions.rank() == 2,
          "rope tables: positions are " + positions.describe() + ", expected F32 [tokens, axes] on the CPU");
  require(bands.device == Device::CPU && bands.dtype == DType::F32 && bands.rank() == 1 && bands.dim(0) >= 1,
          "rope tables: bands are " + bands.describe() + ", expected F32 [bands] (at least one) on the CPU");
  const int64_t T = positions.dim(0), A = positions.dim(1), B = bands.dim(0), half = A * B;
  RopeTables t{empty(DType::F32, {T, half}), empty(DType::F32, {T, half})};
  auto* c = t.cos.ptr<float>();
  auto* s = t.sin.ptr<float>();
  const float* pos = positions.ptr<const float>();
  const float* band = bands.ptr<const float>();
  for (int64_t p = 0; p < T; ++p)
    for (int64_t a = 0; a < A; ++a)
      for (int64_t j = 0; j < B; ++j) {
        const float phase = pos[p * A + a] * band[j];
        c[p * half + a * B + j] = std::cos(phase);
        s[p * half + a * B + j] = std::sin(phase);
      }
  return t;
}

}  // namespace tf
