#pragma once
// The transformer's weights: typed views by the official state-dict names, each checked by name,
// dtype and shape (docs/perf/transformer/references.md, "State dict: 463 tensors"). Matrices are
// BF16 as stored (an F32 one is rounded as torch does); on the CPU they are views into the mapped
// checkpoint, on another device they are uploaded once. A fused layers.N.proj.qkv.weight gives q, k
// and v as row views of it.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "families/common/load_options.h"
#include "families/moss_image/transformer/config.h"
#include "io/checkpoint.h"

namespace tf::moss_image {

// Small params (norm weights, biases): BF16 as stored, or F32 kept or rounded to bf16 by
// LoadOptions::round_small_params_to_bf16 (the official loads the model in bf16: rounded).
struct TransformerLinear {
  Tensor w;  // BF16 [out, in]
  Tensor b;  // [out], a small param
};

struct TextBlockWeights {
  Tensor norm1, norm2;                  // [dim]
  Tensor q_norm, k_norm;                // [head_dim]
  TransformerLinear qkv;                // [3 * dim, dim]: q; k; v rows
  TransformerLinear proj;               // [dim, dim]
  TransformerLinear ffn_gate, ffn_up;   // [ffn_dim, dim]
  TransformerLinear ffn_down;           // [dim, ffn_dim]
};

struct TextEmbedderWeights {
  TransformerLinear proj;               // [dim, text_dim]
  std::vector<TextBlockWeights> blocks; // config.text_blocks
};

// A joint block (layers.N): no biases.
struct JointBlockWeights {
  Tensor norm1, norm2;    // [dim]
  Tensor q_norm, k_norm;  // [head_dim]
  Tensor q, k, v, o;      // BF16 [dim, dim] (proj.q ...; q, k, v rows of proj.qkv when fused)
  Tensor qkv;             // BF16 [3 * dim, dim] where q, k, v lie side by side (on a device, or fused in the file)
  Tensor ffn_up_gate;     // BF16 [2 * ffn_dim, dim]: hidden rows, then gate rows
  Tensor ffn_down;        // BF16 [dim, ffn_dim]
};

struct TransformerWeights {
  TransformerLinear video_embedder;           // [dim, latent_channels]
  TextEmbedderWeights text_embedder;
  TransformerLinear time_embedding_0;         // time_embedding.0 [dim, freq_dim]
  TransformerLinear time_embedding_2;         // time_embedding.2 [dim, dim] (.1 is the SiLU)
  TransformerLinear shared_block_modulation;  // [6 * dim, dim]
  TransformerLinear video_head_modulation;    // [2 * dim, dim]
  std::vector<JointBlockWeights> layers;
  Tensor final_norm_video;                    // [dim]
  Tensor final_linear_video;                  // BF16 [latent_channels, dim] (no bias)
  // F32 [rope_bands] on the CPU (the tables are built there): rope.bands as stored (F32, or BF16
  // widened exactly), else rope_bands_from_formula; never rounded (a buffer, not a param)
  Tensor rope_bands;

  // What the checkpoint held.
  std::string prefix;          // "", "model.diffusion_model.", "diffusion_model." or "transformer."
  bool fused_qkv = false;      // layers.N.proj.qkv.weight instead of proj.{q,k,v}.weight
  bool small_params_rounded = false;
  bool rope_bands_stored = false;    // rope.bands read from the file (else the formula's)
  int64_t rope_bands_off_formula = 0;  // stored bands whose bits differ from the formula's
};

// Every tensor of `ckpt` under `prefix`, checked against `config`; errors name the file, the tensor
// and the expected dtype and shape. A tensor the transformer does not have is an error naming it
// (rope.bands is the one optional tensor).
TransformerWeights load_transformer_weights(const Checkpoint& ckpt, const std::string& prefix,
                                            const TransformerConfig& config, const LoadOptions& options);

// The RoPE bands as the reference computes them, in fp32: b_j = 1 / pow(fp32(base), fp32(j) / fp32(bands)),
// j < bands. F32 [bands] on the CPU.
Tensor rope_bands_from_formula(int64_t bands, double base);

}  // namespace tf::moss_image
