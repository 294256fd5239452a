#pragma once
// How a bf16 family loads its checkpoint: onto which device, and how it takes the small F32
// tensors a checkpoint stores beside its bf16 matrices (gates, decays, norm weights).
#include "core/tensor.h"

namespace tf {

struct LoadOptions {
  Device device = Device::CPU;
  // Rounded to bf16, as the reference does when it loads the model in bf16; false uses them as stored.
  bool round_small_params_to_bf16 = true;
};

}  // namespace tf
