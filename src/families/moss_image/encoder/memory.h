#pragma once
// How much memory the encoder's forward holds at once for a packed batch of `tokens` tokens,
// estimated before the forward so a prompt the machine cannot hold is refused by name instead of
// overcommitting and being killed. Every buffer of encoder.cpp is per token (the CPU attention's
// scratch is per thread, CUDA's per query block), so the estimate is tokens x the largest
// sublayer's live bytes per token. The weights are not counted: on CUDA they are resident before
// the free memory is read; on the CPU they are file-backed pages the kernel can drop, not
// anonymous memory that can run out.
#include <cstdint>
#include <string>

#include "backend/device/device.h"
#include "families/common/memory.h"
#include "families/moss_image/encoder/config.h"

namespace tf::moss_image {

// The peak is named by its sublayer: "DeltaNet", "attention" or "MLP".
MemoryEstimate encoder_memory(const EncoderConfig& c, int64_t tokens);

// Refuses (tf::Error) a forward whose estimate exceeds `have`, naming `what` (the prompts), the
// token count, the estimated and the available GiB.
void require_memory_for_tokens(const EncoderConfig& c, int64_t tokens, const AvailableMemory& have,
                               const std::string& what);

}  // namespace tf::moss_image
