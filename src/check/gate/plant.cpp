#include "check/gate/plant.h"

#include <algorithm>
#include <cmath>

#include "core/bf16.h"
#include "core/error.h"

namespace tf::check::gate {

Plant Plant::parse(const std::string& value, const std::vector<std::string>& extras) {
  Plant p;
  if (value.empty() || value == "none") return p;
  if (value == "repeat") {
    p.kind = Kind::Repeat;
    return p;
  }
  if (value == "row@") fail("--plant \"row@\": expected a step name after '@'");
  if (value == "row" || value.rfind("row@", 0) == 0) {
    p.kind = Kind::Row;
    p.step = value.size() > 4 ? value.substr(4) : "";
    return p;
  }
  for (const std::string& e : extras)
    if (value == e) {
      p.kind = Kind::Extra;
      p.name = e;
      return p;
    }
  std::string accepted = "none, row, row@STEP, repeat";
  for (const std::string& e : extras) accepted += ", " + e;
  fail("--plant \"" + value + "\": unknown plant, expected one of: " + accepted);
}

std::string Plant::describe() const {
  switch (kind) {
    case Kind::None: return "none";
    case Kind::Row: return step.empty() ? "row" : "row@" + step;
    case Kind::Repeat: return "repeat";
    case Kind::Extra: return name;
  }
  return "none";
}

double planted_row_factor(double limit_row) { return 1.0 + std::max(0.05, 4.0 * limit_row); }

namespace {

// Element (r, c) of `t` viewed as rows x cols: its index.
struct RowView {
  int64_t rows, cols, row_stride, col_stride;
};

RowView view_of(const Tensor& t, Rows rows) {
  require(t.rank() >= 1 && t.numel() > 0, "plant: " + t.describe() + " has no rows");
  if (rows == Rows::Tokens) return {t.dim(0), t.numel() / t.dim(0), t.numel() / t.dim(0), 1};
  const int64_t positions = t.numel() / t.dim(0);
  return {positions, t.dim(0), 1, positions};
}

double get(const Tensor& t, int64_t i) {
  return t.dtype == DType::BF16 ? float_from_bf16_bits(t.ptr<const uint16_t>()[i]) : t.ptr<const float>()[i];
}

void set(Tensor& t, int64_t i, double v) {
  if (t.dtype == DType::BF16) t.ptr<uint16_t>()[i] = bf16_bits_from_float(static_cast<float>(v));
  else t.ptr<float>()[i] = static_cast<float>(v);
}

}  // namespace

void scale_largest_row(Tensor& t, Rows rows, double factor) {
  require(t.device == Device::CPU && (t.dtype == DType::F32 || t.dtype == DType::BF16),
          "plant: " + t.describe() + " is not F32 or BF16 on the CPU");
  const RowView v = view_of(t, rows);
  int64_t best = 0;
  double best_norm = -1;
  for (int64_t r = 0; r < v.rows; ++r) {
    double n = 0;
    for (int64_t c = 0; c < v.cols; ++c) n += std::pow(get(t, r * v.row_stride + c * v.col_stride), 2);
    if (n > best_norm) best_norm = n, best = r;
  }
  for (int64_t c = 0; c < v.cols; ++c) {
    const int64_t i = best * v.row_stride + c * v.col_stride;
    set(t, i, get(t, i) * factor);
  }
}

void flip_one_bit(Tensor& t) {
  require(t.device == Device::CPU && t.numel() > 0, "plant: " + t.describe() + " has nothing to flip");
  static_cast<uint8_t*>(t.data)[(t.numel() / 2) * dtype_size(t.dtype)] ^= 1;
}

}  // namespace tf::check::gate
