#pragma once
// MOSS-Image's published pipeline folder as the pipeline reads it: model_index.json with
// scheduler/, text_encoder/, tokenizer/, transformer/ and vae/. Every config is read and the
// components are checked against each other before any weight loads, so a mismatched folder is
// refused by name at once.
#include <string>

#include "families/flux2_vae/config.h"
#include "families/moss_image/encoder/config.h"
#include "families/moss_image/transformer/config.h"

namespace tf::pipelines {

struct SchedulerConfig {
  int64_t train_steps = 1000;  // num_train_timesteps: the sampler's grid (only 1000 is supported)
  double shift = 5.0;          // the default shift (the request's wins)
  std::string source;
};

struct MossImageFolder {
  std::string dir, text_encoder, tokenizer, transformer, vae, scheduler;  // folders
  moss_image::EncoderConfig encoder_config;
  moss_image::TransformerConfig transformer_config;
  flux2_vae::Config vae_config;
  SchedulerConfig scheduler_config;

  // Refuses a folder that is not a MOSS-Image pipeline: a missing component folder, a bad config,
  // a transformer whose text_dim is not the encoder's hidden size or whose latent channels are not
  // the VAE's tokens' width.
  static MossImageFolder open(const std::string& dir);

  // Bytes of the component's *.safetensors files (its weights as stored).
  static double weight_file_bytes(const std::string& component_dir);
};

}  // namespace tf::pipelines
