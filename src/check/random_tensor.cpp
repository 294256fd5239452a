#include "check/random_tensor.h"

#include <random>
#include <string>

#include "core/bf16.h"
#include "core/error.h"

namespace tf::check {

Tensor random_normal_tensor(DType dtype, Shape shape, uint32_t seed, float scale, float mean) {
  require(dtype == DType::F32 || dtype == DType::BF16,
          "random_normal_tensor: dtype " + std::string(dtype_name(dtype)) + ", expected F32 or BF16");
  Tensor t = empty(dtype, std::move(shape));
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(mean, scale);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = nd(rng);
    if (dtype == DType::F32) t.ptr<float>()[i] = v;
    else t.ptr<uint16_t>()[i] = bf16_bits_from_float(v);
  }
  return t;
}

}  // namespace tf::check
