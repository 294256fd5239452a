#include "check/contract/inputs.h"

#include <cmath>
#include <cstring>
#include <numbers>

#include "core/bf16.h"
#include "core/error.h"

namespace tf::contract {

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }
double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

double Rng::normal() {
  double u1 = uniform(), u2 = uniform();
  if (u1 < 0x1p-60) u1 = 0x1p-60;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

int64_t Rng::below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

Rng Rng::fork(uint64_t salt) { return Rng(next() ^ (salt * 0xd1b54a32d192ed03ull)); }

double stored_value(DType t, double x) {
  switch (t) {
    case DType::BF16: return bf16_of(x);
    case DType::F16: return f16_of(x);
    case DType::F32: return f32_of(x);
    case DType::F64: return x;
    case DType::I32:
    case DType::I64: return std::nearbyint(x);
    default: fail(std::string("contract: unsupported dtype ") + std::string(dtype_name(t)));
  }
}

Tensor host_empty(DType t, Shape s) { return empty(t, std::move(s), Device::CPU); }

void set_values(Tensor& t, std::span<const double> values) {
  require(static_cast<int64_t>(values.size()) == t.numel(), "contract: value count does not match " + t.describe());
  for (int64_t i = 0; i < t.numel(); ++i) {
    double x = stored_value(t.dtype, values[i]);
    switch (t.dtype) {
      case DType::BF16: t.ptr<uint16_t>()[i] = bf16_bits_from_float(static_cast<float>(x)); break;
      case DType::F32: t.ptr<float>()[i] = static_cast<float>(x); break;
      case DType::F64: t.ptr<double>()[i] = x; break;
      case DType::I32: t.ptr<int32_t>()[i] = static_cast<int32_t>(x); break;
      case DType::I64: t.ptr<int64_t>()[i] = static_cast<int64_t>(x); break;
      default: fail("contract: cannot fill " + t.describe());
    }
  }
}

Tensor host_tensor(DType t, Shape s, std::span<const double> values) {
  Tensor x = host_empty(t, std::move(s));
  set_values(x, values);
  return x;
}

Tensor random_normal(Rng& rng, DType t, Shape s, double sigma) {
  std::vector<double> v(static_cast<size_t>(shape_numel(s)));
  for (double& x : v) x = sigma * rng.normal();
  return host_tensor(t, std::move(s), v);
}

Tensor random_uniform(Rng& rng, DType t, Shape s, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(shape_numel(s)));
  for (double& x : v) x = rng.uniform(lo, hi);
  return host_tensor(t, std::move(s), v);
}

std::vector<double> values_of(const Tensor& t) {
  require(t.device == Device::CPU, "contract: values_of needs a host tensor, got " + t.describe());
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype) {
      case DType::BF16: v[i] = float_from_bf16_bits(t.ptr<uint16_t>()[i]); break;
      case DType::F16: v[i] = float_from_f16_bits(t.ptr<uint16_t>()[i]); break;
      case DType::F32: v[i] = t.ptr<float>()[i]; break;
      case DType::F64: v[i] = t.ptr<double>()[i]; break;
      case DType::I32: v[i] = t.ptr<int32_t>()[i]; break;
      case DType::I64: v[i] = static_cast<double>(t.ptr<int64_t>()[i]); break;
      default: fail("contract: cannot read " + t.describe());
    }
  }
  return v;
}

std::vector<Tracked> tracked_of(const Tensor& t) {
  std::vector<double> v = values_of(t);
  std::vector<Tracked> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = exact(v[i]);
  return out;
}

}  // namespace tf::contract
