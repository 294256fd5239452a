#pragma once
// The CPU kernels behind backend/<op>.h (the shared list in backend/transformer_kernels.inc).
// Rounding points are documented on each op's backend header.
#include "backend/embed/embedding.h"
#include "backend/linear/linear.h"
#include "backend/device/seq_offsets.h"
#include "core/tensor.h"

namespace tf::cpu {

#include "backend/transformer_kernels.inc"

// Which linear kernel runs: Auto picks the widest the machine has. All give the same bytes.
enum class LinearKernel { Auto, Scalar, Avx2, Avx512 };
void set_linear_kernel(LinearKernel k);
LinearKernel linear_kernel_in_use();
const char* linear_kernel_name(LinearKernel k);

}  // namespace tf::cpu
