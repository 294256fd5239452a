#pragma once
// The transformer from a path: a pipeline folder (model_index.json -> transformer/), the
// transformer's diffusers folder (config.json + diffusion_pytorch_model shards and their index, or
// one diffusion_pytorch_model.safetensors), or one .safetensors file of a single-file export (keys
// bare or under one prefix, q/k/v fused or not; the geometry from a config.json beside it, else
// read from the tensor shapes).
#include <string>

#include "families/common/load_options.h"
#include "families/moss_image/transformer/config.h"
#include "families/moss_image/transformer/weights.h"

namespace tf::moss_image {

struct LoadedTransformer {
  TransformerConfig config;
  TransformerWeights weights;
};

LoadedTransformer load_transformer(const std::string& path, const LoadOptions& options);

}  // namespace tf::moss_image
