#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/vae_ops.h"

namespace tf::contract {

// The flux2_vae's ops; the flag says whether the op has a CUDA kernel in this tree.
void register_vae_kernels() {
  register_conv2d(true);
  register_group_norm(true);
  register_upsample_nearest2x(true);
  register_attention_f32_channels(true);
  register_add(true);
}

}  // namespace tf::contract
