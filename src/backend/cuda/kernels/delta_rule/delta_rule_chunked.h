#pragma once
// The chunked gated delta rule's launcher, for the op that dispatches between the two forms.
#include "backend/cuda/primitives/device_math.cuh"
#include "core/tensor.h"

namespace tf::cuda {

// Runs the chunked form on the sequences of at least min_len tokens; the others are left alone.
void launch_delta_rule_chunked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                               const SeqTable& seqs, int min_len, Tensor& o);

}  // namespace tf::cuda
