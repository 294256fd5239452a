#pragma once
// How much memory a run of the VAE holds at once, estimated from the picture's size before any
// work, so an absurd size is refused by name instead of overcommitting and being killed. The
// estimate walks the stages' real block structure (stages.cpp, blocks.cpp) with shapes only and
// counts every activation that is alive at each op (an upper bound: inputs held by the caller are
// counted even where a block could reuse them).
#include <cstdint>
#include <string>

#include "backend/device/device.h"
#include "families/common/memory.h"
#include "families/flux2_vae/config.h"

namespace tf::flux2_vae {

// picture -> moments for a width x height picture (sides multiples of picture_multiple()).
MemoryEstimate encode_memory(const Config& c, int64_t width, int64_t height, Device d);
// latents -> picture for a width x height picture (latents of width/downscale x height/downscale).
MemoryEstimate decode_memory(const Config& c, int64_t width, int64_t height, Device d);

enum class Direction { Encode, Decode };

// Refuses (tf::Error) a run whose estimate exceeds `have`: the message starts with `what` (the
// file or flag the size came from) and states the picture size, the estimated and the available
// GiB, and the largest picture of the same shape that would fit.
void require_memory_for(Direction dir, const Config& c, int64_t width, int64_t height, Device d,
                        const AvailableMemory& have, const std::string& what);

}  // namespace tf::flux2_vae
