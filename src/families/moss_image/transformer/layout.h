#pragma once
// How a transformer checkpoint names its tensors: the official bare keys, or every key under one
// prefix of the single-file exports (model.diffusion_model., diffusion_model., transformer.).
#include <string>

#include "io/checkpoint.h"

namespace tf::moss_image {

// The one prefix all of the checkpoint's keys share ("" for bare keys); keys under different
// prefixes are an error naming one key of each.
std::string find_transformer_prefix(const Checkpoint& ckpt);

}  // namespace tf::moss_image
