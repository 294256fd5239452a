#pragma once
// The CUDA kernels behind backend/<op>.h (the shared list in backend/transformer_kernels.inc).
// Rounding points are documented on each op's backend header; sums run in fp32 in a fixed order
// per output, so repeats are byte-identical.
#include "backend/embed/embedding.h"
#include "backend/linear/linear.h"
#include "backend/device/seq_offsets.h"
#include "core/tensor.h"

namespace tf::cuda {

#include "backend/transformer_kernels.inc"

}  // namespace tf::cuda
