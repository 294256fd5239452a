#include "check/gate/convert.h"

#include "core/bf16.h"
#include "core/error.h"

namespace tf::check::gate {

namespace {

float value(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::F32: return t.ptr<const float>()[i];
    case DType::F64: return static_cast<float>(t.ptr<const double>()[i]);
    case DType::BF16: return float_from_bf16_bits(t.ptr<const uint16_t>()[i]);
    default: fail("gate: " + t.describe() + " is not F32, F64 or BF16");
  }
}

}  // namespace

Tensor to_bf16(const Tensor& t) {
  require(t.device == Device::CPU, "gate: " + t.describe() + " must be on the CPU");
  Tensor out = empty(DType::BF16, t.shape);
  for (int64_t i = 0; i < t.numel(); ++i) out.ptr<uint16_t>()[i] = bf16_bits_from_float(value(t, i));
  return out;
}

Tensor to_f32(const Tensor& t) {
  require(t.device == Device::CPU, "gate: " + t.describe() + " must be on the CPU");
  if (t.dtype == DType::F32) return t;
  Tensor out = empty(DType::F32, t.shape);
  for (int64_t i = 0; i < t.numel(); ++i) out.ptr<float>()[i] = value(t, i);
  return out;
}

}  // namespace tf::check::gate
