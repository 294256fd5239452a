#pragma once
// Distances between a result and its reference, as the reference gates state them: the cosine
// error of the whole tensor and the worst relative error of any row. Rows are the leading axis
// ([rows, ...] row-major); all arithmetic is fp64.
#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace tf::check {

struct Distance {
  double cosine_error = 0;   // 1 - <a, b> / (|a| |b|) over all elements (0 when both are zero)
  double worst_row = 0;      // max over rows r of |a_r - b_r| / |b_r|
  int64_t worst_row_index = -1;
  bool finite = true;        // false when `got` holds a NaN or Inf where the reference is finite
};

// got, ref: CPU tensors of one shape (F32, F64 or BF16; dtypes may differ). A reference row of
// norm zero counts as error 0 when the result's row is zero too, else as an infinite error (a
// padding row must stay zero).
Distance compare_rows(const Tensor& got, const Tensor& ref);

// [C, H, W] or [C, N] channel-major activations compared per position: row n is the vector of
// channels at position n.
Distance compare_positions(const Tensor& got, const Tensor& ref);

std::string describe(const Distance& d);  // "cosine 1.2e-09, worst row 3.4e-05 (row 17)"

// got and ref: CPU tensors. True when dtype, shape and every byte agree (a repeat's contract).
bool same_bytes(const Tensor& got, const Tensor& ref);

// One number as a gate report prints it: format_number("%.2e", x) -> "1.23e-05".
std::string format_number(const char* printf_format, double value);

}  // namespace tf::check
