#pragma once
// The FLUX.2 VAE's geometry (diffusers' AutoencoderKLFlux2 config.json), defaults as released.
#include <cstdint>
#include <string>
#include <vector>

namespace tf::flux2_vae {

struct Config {
  int64_t in_channels = 3, out_channels = 3;
  std::vector<int64_t> block_out_channels{128, 256, 512, 512};
  std::vector<int64_t> decoder_block_out_channels;  // empty: the encoder's
  int64_t layers_per_block = 2;                      // the decoder has one more per stage
  int64_t latent_channels = 32;
  int64_t norm_num_groups = 32;
  bool use_quant_conv = true, use_post_quant_conv = true, mid_block_add_attention = true;
  double batch_norm_eps = 1e-4;
  int64_t patch = 2;               // 2x2 patches (patch_size)
  float norm_eps = 1e-6f;          // every GroupNorm of the encoder and decoder

  const std::vector<int64_t>& decoder_widths() const {
    return decoder_block_out_channels.empty() ? block_out_channels : decoder_block_out_channels;
  }
  int64_t token_width() const { return latent_channels * patch * patch; }  // 128 for FLUX.2
  int64_t downscale() const { return int64_t{1} << (block_out_channels.size() - 1); }  // 8 for FLUX.2
  int64_t picture_multiple() const { return downscale() * patch; }                    // 16 for FLUX.2
  bool is_released_geometry() const;  // FLUX.2's, with its own decoder or MOSS-Image's small one
  std::string summary() const;
};

// Reads and validates <dir>/config.json; errors name the file and the key.
Config load_config(const std::string& component_dir);

// Checks widths against the group count and the block types; errors say what was expected.
void validate(const Config& c, const std::string& where);

}  // namespace tf::flux2_vae
