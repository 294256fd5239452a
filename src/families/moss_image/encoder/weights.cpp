#include "families/moss_image/encoder/weights.h"

#include "backend/device/upload.h"
#include "core/bf16.h"
#include "core/error.h"
#include "io/checkpoint.h"

namespace tf::moss_image {

namespace {

struct Loader {
  const Checkpoint& ckpt;
  const std::string& prefix;
  const LoadOptions& opt;

  std::string full(const std::string& name) const { return prefix + name; }

  // A matrix or norm weight used as bf16: BF16 as stored (a view), or F32 rounded as torch does.
  Tensor bf16(const std::string& name, const Shape& shape) const {
    std::string n = full(name);
    Tensor t = ckpt.get(n);
    if (t.dtype == DType::F32) {
      expect_tensor(t, ckpt.file_of(n), n, DType::F32, shape);
      Tensor r = empty(DType::BF16, shape);
      for (int64_t i = 0; i < t.numel(); ++i) r.ptr<uint16_t>()[i] = bf16_bits_from_float(t.ptr<float>()[i]);
      return r;
    }
    expect_tensor(t, ckpt.file_of(n), n, DType::BF16, shape);
    return t;
  }

  // A small parameter used as stored (F32 or BF16), or rounded to bf16 when asked.
  Tensor small(const std::string& name, const Shape& shape) const {
    std::string n = full(name);
    Tensor t = ckpt.get(n);
    if (t.dtype != DType::F32 && t.dtype != DType::BF16)
      fail(ckpt.file_of(n) + ": tensor \"" + n + "\" is " + t.describe() + ", expected F32 or BF16 " + shape_str(shape));
    expect_tensor(t, ckpt.file_of(n), n, t.dtype, shape);
    if (t.dtype == DType::F32 && opt.round_small_params_to_bf16) return bf16(name, shape);
    return t;
  }
};

std::string find_prefix(const Checkpoint& ckpt) {
  for (const char* p : {"model.language_model.", "model.", ""})
    if (ckpt.has(std::string(p) + "embed_tokens.weight")) return p;
  fail(ckpt.where() + ": no embed_tokens.weight under model.language_model., model. or the top level; "
       "is this a Qwen3.5 text encoder?");
}

}  // namespace

EncoderWeights load_encoder_weights(const std::string& dir, const EncoderConfig& c, const LoadOptions& opt) {
  Checkpoint ckpt = Checkpoint::open_folder(dir);
  EncoderWeights w;
  w.prefix = find_prefix(ckpt);
  w.small_params_rounded = opt.round_small_params_to_bf16;
  Loader L{ckpt, w.prefix, opt};
  const int64_t H = c.hidden;
  w.embed_tokens = L.bf16("embed_tokens.weight", {c.vocab_size, H});
  w.norm = L.bf16("norm.weight", {H});
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    LayerWeights lw;
    lw.full_attention = c.full_attention[i];
    lw.input_layernorm = L.bf16(p + "input_layernorm.weight", {H});
    lw.post_attention_layernorm = L.bf16(p + "post_attention_layernorm.weight", {H});
    lw.gate_proj = L.bf16(p + "mlp.gate_proj.weight", {c.intermediate, H});
    lw.up_proj = L.bf16(p + "mlp.up_proj.weight", {c.intermediate, H});
    lw.down_proj = L.bf16(p + "mlp.down_proj.weight", {H, c.intermediate});
    if (lw.full_attention) {
      const std::string a = p + "self_attn.";
      const int64_t qd = c.attn_heads * c.head_dim, kvd = c.kv_heads * c.head_dim;
      lw.attn.q_proj = L.bf16(a + "q_proj.weight", {2 * qd, H});
      lw.attn.k_proj = L.bf16(a + "k_proj.weight", {kvd, H});
      lw.attn.v_proj = L.bf16(a + "v_proj.weight", {kvd, H});
      lw.attn.q_norm = L.bf16(a + "q_norm.weight", {c.head_dim});
      lw.attn.k_norm = L.bf16(a + "k_norm.weight", {c.head_dim});
      lw.attn.o_proj = L.bf16(a + "o_proj.weight", {H, qd});
    } else {
      const std::string d = p + "linear_attn.";
      const int64_t vd = c.lin_value_heads * c.lin_value_dim;
      lw.delta.in_proj_qkv = L.bf16(d + "in_proj_qkv.weight", {c.conv_channels(), H});
      lw.delta.in_proj_z = L.bf16(d + "in_proj_z.weight", {vd, H});
      lw.delta.in_proj_b = L.bf16(d + "in_proj_b.weight", {c.lin_value_heads, H});
      lw.delta.in_proj_a = L.bf16(d + "in_proj_a.weight", {c.lin_value_heads, H});
      lw.delta.conv1d = L.bf16(d + "conv1d.weight", {c.conv_channels(), 1, c.conv_kernel});
      lw.delta.dt_bias = L.small(d + "dt_bias", {c.lin_value_heads});
      lw.delta.A_log = L.small(d + "A_log", {c.lin_value_heads});
      lw.delta.norm = L.small(d + "norm.weight", {c.lin_value_dim});
      lw.delta.out_proj = L.bf16(d + "out_proj.weight", {H, vd});
    }
    w.layers.push_back(std::move(lw));
  }
  // Every tensor is checked before any is copied; on the CPU they stay views into the mapping.
  // gate and up side by side, up after gate: the MLP's gated streaming launch reads both through one map
  std::vector<std::vector<Tensor*>> all{{&w.embed_tokens}, {&w.norm}};
  for (LayerWeights& lw : w.layers) {
    for (Tensor* t : {&lw.input_layernorm, &lw.post_attention_layernorm, &lw.down_proj}) all.push_back({t});
    all.push_back({&lw.gate_proj, &lw.up_proj});
    if (lw.full_attention)
      for (Tensor* t : {&lw.attn.q_proj, &lw.attn.k_proj, &lw.attn.v_proj, &lw.attn.q_norm, &lw.attn.k_norm, &lw.attn.o_proj})
        all.push_back({t});
    else
      for (Tensor* t : {&lw.delta.in_proj_qkv, &lw.delta.in_proj_z, &lw.delta.in_proj_b, &lw.delta.in_proj_a,
                        &lw.delta.conv1d, &lw.delta.dt_bias, &lw.delta.A_log, &lw.delta.norm, &lw.delta.out_proj})
        all.push_back({t});
  }
  upload_tensors(all, opt.device, "text encoder weights");
  return w;
}

}  // namespace tf::moss_image
