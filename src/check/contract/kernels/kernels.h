#pragma once
// Each kernel's contract lives in its own file here; these register them, family by family.
namespace tf::contract {

void register_encoder_kernels();  // moss_image: the Qwen3.5 text model's ops
void register_vae_kernels();      // flux2_vae: the FLUX.2 VAE's ops

}  // namespace tf::contract
