#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/vae_ops.h"

namespace tf::contract {

// The flux2_vae's ops; the flag says whether the op has a CUDA kernel in this tree.
void register_vae_kernels() {
  register_conv2d(false);
  register_group_norm(false);
  register_upsample_nearest2x(false);
  register_attention_single_head(false);
  register_add(false);
}

}  // namespace tf::contract
