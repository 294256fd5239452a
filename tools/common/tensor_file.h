#pragma once
// Tensors named on the command line: a safetensors file's tensor, read into own memory.
#include <string>

#include "core/tensor.h"

namespace tf::tools {

// Tensor `name` of `file` (given as `flag`); a leading batch dimension of 1 (diffusers' layout) is
// dropped from a rank-4 tensor, and from a rank-3 one unless `rank3_is_unbatched`. Errors name the
// flag, the file and the tensor.
Tensor read_tensor(const std::string& flag, const std::string& file, const std::string& name,
                   bool rank3_is_unbatched = false);

}  // namespace tf::tools
