#pragma once
// The flux2_vae ops' contract registrations; `cuda` says whether the op has a CUDA kernel.
namespace tf::contract {

void register_conv2d(bool cuda);
void register_group_norm(bool cuda);
void register_upsample_nearest2x(bool cuda);
void register_attention_f32_channels(bool cuda);
void register_add(bool cuda);

}  // namespace tf::contract
