#pragma once
// SiTU's two fp32 factors tabulated over all 65,536 bf16 inputs by the formula's own device code
// (modulation.cu), for the kernels that look them up.
#include <cstdint>

namespace tf::cuda {

constexpr int kSituPatterns = 1 << 16;

// gate factors at [0, kSituPatterns), up factors after them; made once per process outside a graph
// capture (null while capturing before then).
const float* situ_tables();

}  // namespace tf::cuda
