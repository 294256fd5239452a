#include "families/moss_image/transformer/weights.h"

#include <bit>
#include <cmath>
#include <set>

#include "backend/device/upload.h"
#include "core/bf16.h"
#include "core/error.h"

namespace tf::moss_image {

namespace {

// A tensor as stored, as expect_tensor words it: "BF16 [64, 64]".
std::string stored(const Tensor& t) { return std::string(dtype_name(t.dtype)) + " " + shape_str(t.shape); }

// Reads tensors by their official names under the prefix and remembers which it read, so the
// tensors left over can be named.
struct Loader {
  const Checkpoint& ck;
  const std::string& prefix;
  const LoadOptions& opt;
  std::set<std::string> used;

  // The full name of a tensor the model needs; `expected` says what it should be.
  std::string take(const std::string& name, const std::string& expected) {
    const std::string n = prefix + name;
    if (!ck.has(n)) fail(ck.where() + ": missing tensor \"" + n + "\", expected " + expected);
    used.insert(n);
    return n;
  }

  static Tensor rounded_to_bf16(const Tensor& t) {
    Tensor r = empty(DType::BF16, t.shape);
    for (int64_t i = 0; i < t.numel(); ++i) r.ptr<uint16_t>()[i] = bf16_bits_from_float(t.ptr<float>()[i]);
    return r;
  }

  // A matrix: BF16 as stored (a view), or F32 rounded as torch does.
  Tensor matrix(const std::string& name, const Shape& shape) {
    const std::string n = take(name, "BF16 " + shape_str(shape));
    const Tensor t = ck.get(n);
    if (t.dtype == DType::F32) {
      expect_tensor(t, ck.file_of(n), n, DType::F32, shape);
      return rounded_to_bf16(t);
    }
    if (t.dtype != DType::BF16)
      fail(ck.file_of(n) + ": tensor \"" + n + "\" is " + stored(t) + ", expected BF16 " + shape_str(shape) +
           " (or F32, rounded to bf16)");
    expect_tensor(t, ck.file_of(n), n, DType::BF16, shape);
    return t;
  }

  // A norm weight or bias: BF16 as stored, F32 as stored or rounded when asked.
  Tensor small(const std::string& name, const Shape& shape) {
    const std::string n = take(name, "BF16 or F32 " + shape_str(shape));
    const Tensor t = ck.get(n);
    if (t.dtype != DType::F32 && t.dtype != DType::BF16)
      fail(ck.file_of(n) + ": tensor \"" + n + "\" is " + stored(t) + ", expected BF16 or F32 " + shape_str(shape));
    expect_tensor(t, ck.file_of(n), n, t.dtype, shape);
    return t.dtype == DType::F32 && opt.round_small_params_to_bf16 ? rounded_to_bf16(t) : t;
  }

  TransformerLinear linear(const std::string& name, int64_t out, int64_t in) {
    return {matrix(name + ".weight", {out, in}), small(name + ".bias", {out})};
  }

  // Anything the checkpoint holds that was not read: a different model's tensors.
  void refuse_leftovers() const {
    std::vector<std::string> left;
    for (const std::string& n : ck.names())
      if (!used.count(n)) left.push_back(n);
    if (left.empty()) return;
    std::string list;
    for (size_t i = 0; i < left.size() && i < 5; ++i) list += (i ? ", \"" : "\"") + left[i] + "\"";
    if (left.size() > 5) list += " and " + std::to_string(left.size() - 5) + " more";
    fail(ck.file_of(left.front()) + ": " + std::to_string(left.size()) +
         " tensor(s) a MOSS-Image transformer of this geometry does not have: " + list +
         " (a different model's checkpoint, or a config.json that does not fit it?)");
  }
};

TextBlockWeights text_block(Loader& L, const TransformerConfig& c, int64_t i) {
  const std::string p = "text_embedder.blocks." + std::to_string(i) + ".";
  const int64_t D = c.dim, F = c.ffn_dim;
  TextBlockWeights b;
  b.norm1 = L.small(p + "norm1.weight", {D});
  b.norm2 = L.small(p + "norm2.weight", {D});
  b.q_norm = L.small(p + "q_norm.weight", {c.head_dim});
  b.k_norm = L.small(p + "k_norm.weight", {c.head_dim});
  b.qkv = L.linear(p + "qkv", 3 * D, D);
  b.proj = L.linear(p + "proj", D, D);
  b.ffn_gate = L.linear(p + "ffn_gate", F, D);
  b.ffn_up = L.linear(p + "ffn_up", F, D);
  b.ffn_down = L.linear(p + "ffn_down", D, F);
  return b;
}

JointBlockWeights joint_block(Loader& L, const TransformerConfig& c, int64_t i, bool fused_qkv) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t D = c.dim, F = c.ffn_dim;
  JointBlockWeights b;
  b.norm1 = L.small(p + "norm1.weight", {D});
  b.norm2 = L.small(p + "norm2.weight", {D});
  b.q_norm = L.small(p + "q_norm.weight", {c.head_dim});
  b.k_norm = L.small(p + "k_norm.weight", {c.head_dim});
  if (fused_qkv) {
    // q; k; v rows, as ComfyUI fuses them: zero-copy row views
    const Tensor qkv = L.matrix(p + "proj.qkv.weight", {3 * D, D});
    b.q = qkv.rows(0, D);
    b.k = qkv.rows(D, 2 * D);
    b.v = qkv.rows(2 * D, 3 * D);
  } else {
    b.q = L.matrix(p + "proj.q.weight", {D, D});
    b.k = L.matrix(p + "proj.k.weight", {D, D});
    b.v = L.matrix(p + "proj.v.weight", {D, D});
  }
  b.o = L.matrix(p + "proj.o.weight", {D, D});
  b.ffn_up_gate = L.matrix(p + "proj.ffn_up_gate.weight", {2 * F, D});
  b.ffn_down = L.matrix(p + "proj.ffn_down.weight", {D, F});
  return b;
}

// rope.bands as stored (the official module loads the buffer), else the formula's.
void read_rope_bands(Loader& L, const TransformerConfig& c, TransformerWeights& w) {
  const Tensor formula = rope_bands_from_formula(c.rope_bands, c.rope_base);
  const std::string n = L.prefix + "rope.bands";
  if (!L.ck.has(n)) {
    w.rope_bands = formula;
    return;
  }
  L.used.insert(n);
  const Tensor t = L.ck.get(n);
  if (t.dtype != DType::F32 && t.dtype != DType::BF16)
    fail(L.ck.file_of(n) + ": tensor \"" + n + "\" is " + stored(t) + ", expected F32 [" +
         std::to_string(c.rope_bands) + "]");
  expect_tensor(t, L.ck.file_of(n), n, t.dtype, {c.rope_bands});
  w.rope_bands = empty(DType::F32, {c.rope_bands});
  for (int64_t j = 0; j < c.rope_bands; ++j) {
    // a BF16 buffer widens to F32 exactly
    const float b = t.dtype == DType::F32 ? t.ptr<float>()[j] : float_from_bf16_bits(t.ptr<uint16_t>()[j]);
    if (!(std::isfinite(b) && b > 0))
      fail(L.ck.file_of(n) + ": tensor \"" + n + "\" band " + std::to_string(j) + " is " + std::to_string(b) +
           "; RoPE bands are positive finite frequencies");
    w.rope_bands.ptr<float>()[j] = b;
    w.rope_bands_off_formula += std::bit_cast<uint32_t>(b) != std::bit_cast<uint32_t>(formula.ptr<float>()[j]);
  }
  w.rope_bands_stored = true;
}

}  // namespace

Tensor rope_bands_from_formula(int64_t bands, double base) {
  require(bands >= 1, "rope bands: need at least one band, got " + std::to_string(bands));
  Tensor t = empty(DType::F32, {bands});
  // each step in fp32, as torch and numpy compute it: exponent, pow, reciprocal
  const float b = static_cast<float>(base), n = static_cast<float>(bands);
  for (int64_t j = 0; j < bands; ++j) t.ptr<float>()[j] = 1.0f / std::pow(b, static_cast<float>(j) / n);
  return t;
}

TransformerWeights load_transformer_weights(const Checkpoint& ck, const std::string& prefix,
                                            const TransformerConfig& c, const LoadOptions& opt) {
  Loader L{ck, prefix, opt, {}};
  TransformerWeights w;
  w.prefix = prefix;
  w.small_params_rounded = opt.round_small_params_to_bf16;
  w.fused_qkv = ck.has(prefix + "layers.0.proj.qkv.weight");
  const int64_t D = c.dim;
  w.video_embedder = L.linear("video_embedder", D, c.latent_channels);
  w.text_embedder.proj = L.linear("text_embedder.proj", D, c.text_dim);
  for (int64_t i = 0; i < c.text_blocks; ++i) w.text_embedder.blocks.push_back(text_block(L, c, i));
  w.time_embedding_0 = L.linear("time_embedding.0", D, c.freq_dim);
  w.time_embedding_2 = L.linear("time_embedding.2", D, D);
  w.shared_block_modulation = L.linear("shared_block_modulation", 6 * D, D);
  w.video_head_modulation = L.linear("video_head_modulation", 2 * D, D);
  for (int64_t i = 0; i < c.layers; ++i) w.layers.push_back(joint_block(L, c, i, w.fused_qkv));
  w.final_norm_video = L.small("final_norm_video.weight", {D});
  w.final_linear_video = L.matrix("final_linear_video.weight", {c.latent_channels, D});
  read_rope_bands(L, c, w);
  L.refuse_leftovers();

  // Every tensor is checked before any is copied; on the CPU they stay views into the mapping.
  std::vector<std::vector<Tensor*>> all;
  auto add = [&](TransformerLinear& l) { all.push_back({&l.w}), all.push_back({&l.b}); };
  for (TransformerLinear* l : {&w.video_embedder, &w.text_embedder.proj, &w.time_embedding_0, &w.time_embedding_2,
                               &w.shared_block_modulation, &w.video_head_modulation})
    add(*l);
  for (TextBlockWeights& b : w.text_embedder.blocks) {
    for (Tensor* t : {&b.norm1, &b.norm2, &b.q_norm, &b.k_norm}) all.push_back({t});
    for (TransformerLinear* l : {&b.qkv, &b.proj, &b.ffn_gate, &b.ffn_up, &b.ffn_down}) add(*l);
  }
  for (JointBlockWeights& b : w.layers) {
    for (Tensor* t : {&b.norm1, &b.norm2, &b.q_norm, &b.k_norm, &b.o, &b.ffn_up_gate, &b.ffn_down}) all.push_back({t});
    all.push_back({&b.q, &b.k, &b.v});  // side by side on the device, as a fused qkv is on the host
  }
  all.push_back({&w.final_norm_video});
  all.push_back({&w.final_linear_video});
  upload_tensors(all, opt.device, "transformer weights");
  for (JointBlockWeights& b : w.layers) {  // one product for the three where their rows are one matrix
    const auto* q = static_cast<const uint8_t*>(b.q.data);
    if (b.k.data == q + b.q.nbytes() && b.v.data == q + 2 * b.q.nbytes())
      b.qkv = Tensor{b.q.storage, b.q.data, DType::BF16, {3 * b.q.dim(0), b.q.dim(1)}, b.q.device};
  }
  return w;
}

}  // namespace tf::moss_image
