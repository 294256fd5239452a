#include "check/compare.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "core/bf16.h"
#include "core/error.h"

namespace tf::check {

namespace {

double element(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::F32: return t.ptr<const float>()[i];
    case DType::F64: return t.ptr<const double>()[i];
    case DType::BF16: return float_from_bf16_bits(t.ptr<const uint16_t>()[i]);
    default: fail("compare: " + t.describe() + " is not F32, F64 or BF16");
  }
}

void expect_comparable(const Tensor& got, const Tensor& ref) {
  require(got.device == Device::CPU && ref.device == Device::CPU, "compare: tensors must be on the CPU");
  require(got.shape == ref.shape, "compare: result " + got.describe() + " and reference " + ref.describe() +
                                      " differ in shape");
  for (const Tensor* t : {&got, &ref})
    require(t->dtype == DType::F32 || t->dtype == DType::F64 || t->dtype == DType::BF16,
            "compare: " + t->describe() + " is not F32, F64 or BF16");
}

// rows x cols view with element (r, c) at index r * rs + c * cs.
Distance distance(const Tensor& got, const Tensor& ref, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  Distance d;
  double dot = 0, na = 0, nb = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double diff2 = 0, ref2 = 0, got2 = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * rs + c * cs;
      const double a = element(got, i), b = element(ref, i);
      if (!std::isfinite(a) && std::isfinite(b)) d.finite = false;
      dot += a * b;
      na += a * a;
      nb += b * b;
      diff2 += (a - b) * (a - b);
      ref2 += b * b;
      got2 += a * a;
    }
    double e;
    if (ref2 > 0) e = std::sqrt(diff2 / ref2);
    else e = got2 > 0 ? std::numeric_limits<double>::infinity() : 0.0;
    if (std::isnan(e)) e = std::numeric_limits<double>::infinity();
    if (d.worst_row_index < 0 || e > d.worst_row) {
      d.worst_row = e;
      d.worst_row_index = r;
    }
  }
  if (na == 0 && nb == 0) d.cosine_error = 0;
  else if (na == 0 || nb == 0) d.cosine_error = 1;
  else d.cosine_error = 1.0 - dot / (std::sqrt(na) * std::sqrt(nb));
  if (!d.finite || std::isnan(d.cosine_error)) {
    d.finite = false;
    d.cosine_error = std::numeric_limits<double>::infinity();
    d.worst_row = std::numeric_limits<double>::infinity();
  }
  return d;
}

}  // namespace

Distance compare_rows(const Tensor& got, const Tensor& ref) {
  expect_comparable(got, ref);
  const int64_t rows = got.rank() == 0 ? 1 : got.dim(0);
  const int64_t cols = rows > 0 ? got.numel() / rows : 0;
  return distance(got, ref, rows, cols, cols, 1);
}

Distance compare_positions(const Tensor& got, const Tensor& ref) {
  expect_comparable(got, ref);
  require(got.rank() >= 2, "compare: " + got.describe() + " is not channel-major [C, ...]");
  const int64_t channels = got.dim(0), positions = got.numel() / channels;
  return distance(got, ref, positions, channels, 1, positions);
}

std::string describe(const Distance& d) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "cosine %.3g, worst row %.3g (row %lld)", d.cosine_error, d.worst_row,
                static_cast<long long>(d.worst_row_index));
  return buf;
}

bool same_bytes(const Tensor& got, const Tensor& ref) {
  return got.shape == ref.shape && got.dtype == ref.dtype && std::memcmp(got.data, ref.data, got.nbytes()) == 0;
}

std::string format_number(const char* printf_format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_format, value);
  return buf;
}

}  // namespace tf::check
