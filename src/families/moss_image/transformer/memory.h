#pragma once
// How much memory a packed transformer pass holds at once, estimated from the samples' token counts
// before the pass, so a picture the device cannot hold is refused by name instead of failing an
// allocation halfway. Every activation of transformer.cpp is per token (RoPE tables included; the
// CPU attention's scratch is per thread), so the estimate is the tokens times the largest sublayer's
// live bytes per token. The weights are counted apart (transformer_weight_bytes): on CUDA they are
// resident before the free memory is read.
#include <cstdint>
#include <string>
#include <vector>

#include "backend/device/device.h"
#include "families/common/memory.h"
#include "families/moss_image/transformer/config.h"

namespace tf::moss_image {

// Bytes of the weights as the transformer holds them (bf16 matrices, F32 norms and biases counted
// as bf16 where the load rounds them).
double transformer_weight_bytes(const TransformerConfig& c);

// One pass over samples of image_tokens[i] + text_tokens[i] tokens; the peak is named by sublayer
// ("attention" or "MLP").
MemoryEstimate transformer_memory(const TransformerConfig& c, const std::vector<int64_t>& image_tokens,
                                  const std::vector<int64_t>& text_tokens);

// Refuses (tf::Error) a pass whose estimate, plus `resident` bytes not yet on the device (weights
// about to load), exceeds `have`: the message starts with `what` and states the run, the
// estimated and the available GiB.
void require_memory_for_pass(const TransformerConfig& c, const std::vector<int64_t>& image_tokens,
                             const std::vector<int64_t>& text_tokens, double resident, const AvailableMemory& have,
                             const std::string& what, const std::string& run);

}  // namespace tf::moss_image
