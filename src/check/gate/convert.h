#pragma once
// The dtype conversions a gate feeds steps with: a reference rounded to bf16 (a bf16 step's input,
// and rounding's yardstick) or narrowed to F32 (an fp32 step's input).
#include "core/tensor.h"

namespace tf::check::gate {

// F32, F64 or BF16 (CPU) -> BF16, round to nearest even (F64 through F32).
Tensor to_bf16(const Tensor& t);

// F32, F64 or BF16 (CPU) -> F32 (a share when it is F32 already).
Tensor to_f32(const Tensor& t);

}  // namespace tf::check::gate
