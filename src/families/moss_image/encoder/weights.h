#pragma once
// The encoder's weights: typed views checked by name, dtype and shape. Text tensors may be named
// model.language_model.<name> (the released Qwen3_5ForConditionalGeneration), model.<name> or
// <name>; the vision tower, mtp and lm_head are never read. On the CPU the matrices are views into
// the mapped checkpoint (no copy); on another device they are uploaded once.
#include <string>
#include <vector>

#include "core/tensor.h"
#include "families/common/load_options.h"
#include "families/moss_image/encoder/config.h"

namespace tf::moss_image {

struct DeltaNetWeights {
  Tensor in_proj_qkv;  // BF16 [2*Hk*dk + Hv*dv, hidden]
  Tensor in_proj_z;    // BF16 [Hv*dv, hidden]
  Tensor in_proj_b;    // BF16 [Hv, hidden]
  Tensor in_proj_a;    // BF16 [Hv, hidden]
  Tensor conv1d;       // BF16 [channels, 1, kernel]
  Tensor dt_bias;      // BF16 or F32 [Hv]
  Tensor A_log;        // F32 or BF16 [Hv]
  Tensor norm;         // F32 or BF16 [dv] (plain w)
  Tensor out_proj;     // BF16 [hidden, Hv*dv]
};

struct AttentionWeights {
  Tensor q_proj;  // BF16 [heads * 2 * head_dim, hidden] (query and gate interleaved per head)
  Tensor k_proj;  // BF16 [kv_heads * head_dim, hidden]
  Tensor v_proj;  // BF16 [kv_heads * head_dim, hidden]
  Tensor q_norm;  // BF16 [head_dim] (1 + w)
  Tensor k_norm;  // BF16 [head_dim] (1 + w)
  Tensor o_proj;  // BF16 [hidden, heads * head_dim]
};

struct LayerWeights {
  bool full_attention = false;
  Tensor input_layernorm, post_attention_layernorm;  // BF16 [hidden] (1 + w)
  DeltaNetWeights delta;                             // when !full_attention
  AttentionWeights attn;                             // when full_attention
  Tensor gate_proj, up_proj;                         // BF16 [intermediate, hidden]
  Tensor down_proj;                                  // BF16 [hidden, intermediate]
};

struct EncoderWeights {
  Tensor embed_tokens;  // BF16 [vocab, hidden]
  Tensor norm;          // BF16 [hidden] (1 + w)
  std::vector<LayerWeights> layers;
  std::string prefix;   // the layout found: "model.language_model.", "model." or ""
  bool small_params_rounded = false;
};

// Small params: A_log, dt_bias and linear_attn.norm.weight stored F32.
// `dir`: the text encoder folder (config.json + safetensors shards).
EncoderWeights load_encoder_weights(const std::string& dir, const EncoderConfig& config, const LoadOptions& options);

}  // namespace tf::moss_image
