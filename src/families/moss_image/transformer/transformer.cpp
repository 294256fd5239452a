#include "families/moss_image/transformer/transformer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/attention/attention.h"
#include "backend/attention/qkv_norm_rope.h"
#include "backend/elementwise/silu.h"
#include "backend/elementwise/transpose_to_bf16.h"
#include "backend/embed/timestep_sinusoid.h"
#include "backend/elementwise/situ_gated_product.h"
#include "backend/linear/linear_gated_product.h"
#include "backend/linear/linear.h"
#include "backend/norm/rms_norm.h"
#include "backend/norm/rms_norm_modulate.h"
#include "backend/rope/rope.h"
#include "core/bf16.h"
#include "core/error.h"
#include "core/parallel.h"

namespace tf::moss_image {

namespace {

// The modulation rows' order (time_rows).
enum Mod : int64_t { kShiftA, kScaleA, kGateA, kShiftF, kScaleF, kGateF, kHeadShift, kHeadScale };

Tensor row(const Tensor& t, int64_t r) { return t.rows(r, r + 1).reshaped({t.dim(1)}); }

Tensor product(const Tensor& x, const TransformerLinear& l) {
  Tensor y = empty(DType::BF16, {x.dim(0), l.w.dim(0)}, x.device);
  linear(x, l.w, y, {.bias = &l.b});
  return y;
}

Tensor product(const Tensor& x, const Tensor& w) {
  Tensor y = empty(DType::BF16, {x.dim(0), w.dim(0)}, x.device);
  linear(x, w, y);
  return y;
}

// RMSNorm with the reference's plain weight: bf16(x * r), then * w rounded.
Tensor norm(const Tensor& x, const Tensor& w, float eps) {
  Tensor y = empty(DType::BF16, x.shape, x.device);
  rms_norm(x, w, {NormWeight::plain, eps}, y);
  return y;
}

Tensor host(const Tensor& t) { return to_device(t, Device::CPU); }

// y's q|k|v rows [T, 3 * dim]: one product where the weights lie side by side, else three whose
// rows are interleaved on the host (a CPU checkpoint with separate proj.q, proj.k, proj.v).
Tensor qkv_product(const Tensor& y, const JointBlockWeights& b) {
  if (b.qkv.defined() && b.qkv.numel() > 0) return product(y, b.qkv);
  const int64_t T = y.dim(0), D = b.q.dim(0);
  const Tensor parts[3] = {host(product(y, b.q)), host(product(y, b.k)), host(product(y, b.v))};
  Tensor out = empty(DType::BF16, {T, 3 * D});
  for (int64_t t = 0; t < T; ++t)
    for (int p = 0; p < 3; ++p)
      std::memcpy(out.ptr<uint16_t>() + (3 * t + p) * D, parts[p].ptr<const uint16_t>() + t * D, D * 2);
  return to_device(out, y.device);
}

}  // namespace

Tensor joint_positions(int64_t h, int64_t w, int64_t L) {
  Tensor p = empty(DType::F32, {h * w + L, 4});
  float* v = p.ptr<float>();
  const float cy = static_cast<float>(h - 1) / 2.0f, cx = static_cast<float>(w - 1) / 2.0f;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      float* r = v + (y * w + x) * 4;
      r[0] = 0.0f;
      r[1] = static_cast<float>(L);
      r[2] = static_cast<float>(y) - cy;
      r[3] = static_cast<float>(x) - cx;
    }
  for (int64_t i = 0; i < L; ++i) {
    float* r = v + (h * w + i) * 4;
    r[0] = 0.0f;
    r[1] = static_cast<float>(i);
    r[2] = 0.0f;
    r[3] = 0.0f;
  }
  return p;
}

// Latents F32 [C, h, w] -> bf16 tokens [h*w, C], token n = y*w + x (the reference's flatten and cast).
Tensor latent_tokens(const Tensor& latents) {
  const int64_t C = latents.dim(0), hw = latents.dim(1) * latents.dim(2);
  Tensor t = empty(DType::BF16, {hw, C});
  transpose_to_bf16(latents.reshaped({C, hw}), t);  // the op the device sampling loop runs
  return t;
}

Transformer::Transformer(LoadedTransformer loaded, Device device)
    : c_(std::move(loaded.config)), w_(std::move(loaded.weights)), device_(device) {}

Transformer Transformer::load(const std::string& path, const LoadOptions& options) {
  return Transformer(load_transformer(path, options), options.device);
}

Tensor Transformer::time_rows_from(const Tensor& sigma) const {
  Tensor e = empty(DType::BF16, {1, c_.freq_dim}, device_);
  timestep_sinusoid(sigma, {}, e);
  Tensor t0 = product(e, w_.time_embedding_0);
  silu(t0, t0);
  const Tensor time = product(t0, w_.time_embedding_2);
  const Tensor shared = product(time, w_.shared_block_modulation), head = product(time, w_.video_head_modulation);
  Tensor rows = empty(DType::BF16, {8, c_.dim}, device_);
  Tensor first = rows.rows(0, 6), last = rows.rows(6, 8);
  copy_into(first, shared.reshaped({6, c_.dim}));
  copy_into(last, head.reshaped({2, c_.dim}));
  return rows;
}

Tensor Transformer::time_rows(float sigma) const {
  Tensor s = empty(DType::F32, {1});
  s.ptr<float>()[0] = sigma;
  return host(time_rows_from(to_device(s, device_)));
}

Tensor Transformer::video_embed(const Tensor& latents) const {
  require(latents.dtype == DType::F32 && latents.rank() == 3 && latents.dim(0) == c_.latent_channels,
          "transformer: latents are " + latents.describe() + ", expected F32 [" + std::to_string(c_.latent_channels) +
              ", h, w]");
  return host(product(to_device(latent_tokens(host(latents)), device_), w_.video_embedder));
}

Tensor Transformer::text_embed(const Tensor& rows) const {
  require(rows.dtype == DType::BF16 && rows.rank() == 2 && rows.dim(1) == c_.text_dim,
          "transformer: prompt rows are " + rows.describe() + ", expected BF16 [L, " + std::to_string(c_.text_dim) + "]");
  return host(product(to_device(rows, device_), w_.text_embedder.proj));
}

Tensor Transformer::attention(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, const RopeTables& rope,
                              const SeqOffsets& seqs) const {
  const int64_t T = qkv.dim(0), H = c_.heads, d = c_.head_dim;
  Tensor q = empty(DType::BF16, {T, H, d}, device_), k = empty(DType::BF16, {T, H, d}, device_),
         v = empty(DType::BF16, {T, H, d}, device_);
  qkv_norm_rope(qkv, q_norm, k_norm, static_cast<float>(c_.eps), rope, q, k, v);
  Tensor o = empty(DType::BF16, {T, H, d}, device_);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  tf::attention(q, k, v, {.scale = scale, .mask = AttentionMask::none, .sequences = seqs,
                          .numerics = AttentionNumerics::fused}, o);
  return o.reshaped({T, c_.dim});
}

Tensor Transformer::text_block_on(int64_t i, const Tensor& x_in, const RopeTables& rope, const SeqOffsets& seqs) const {
  const TextBlockWeights& b = w_.text_embedder.blocks.at(i);
  const float eps = static_cast<float>(c_.eps);
  Tensor x = empty(DType::BF16, x_in.shape, device_);
  copy_into(x, x_in);
  const Tensor y = norm(x, b.norm1, eps);
  const Tensor o = attention(product(y, b.qkv), b.q_norm, b.k_norm, rope, seqs);
  linear(o, b.proj.w, {.bias = &b.proj.b, .residual = &x});
  const Tensor y2 = norm(x, b.norm2, eps);
  Tensor s = product(y2, b.ffn_up);  // with biases: the products, then the gated product
  situ_gated_product(s, product(y2, b.ffn_gate), s);
  linear(s, b.ffn_down.w, {.bias = &b.ffn_down.b, .residual = &x});
  return x;
}

void Transformer::joint_block_on(int64_t i, Tensor& x, const Tensor& time, const RopeTables& rope,
                                 const SeqOffsets& seqs) const {
  const JointBlockWeights& b = w_.layers.at(i);
  const float eps = static_cast<float>(c_.eps);
  const int64_t F = c_.ffn_dim;
  Tensor y = empty(DType::BF16, x.shape, device_);
  rms_norm_modulate(x, b.norm1, eps, row(time, kShiftA), row(time, kScaleA), y);
  const Tensor o = attention(qkv_product(y, b), b.q_norm, b.k_norm, rope, seqs);
  const Tensor gate_a = row(time, kGateA), gate_f = row(time, kGateF), shift_f = row(time, kShiftF),
               scale_f = row(time, kScaleF);
  Tensor y2 = empty(DType::BF16, x.shape, device_);  // o's gated add and norm2 in one pass over x
  linear(o, b.o, {.residual = &x, .gate = &gate_a, .norm_weight = &b.norm2, .norm = {NormWeight::plain, eps},
                  .norm_out = &y2, .shift = &shift_f, .scale = &scale_f});
  Tensor s = empty(DType::BF16, {x.dim(0), F}, device_);  // the weight's hidden rows, then its gate rows
  linear_gated_product(y2, b.ffn_up_gate.rows(F, 2 * F), b.ffn_up_gate.rows(0, F), GatedActivation::situ, s);
  linear(s, b.ffn_down, {.residual = &x, .gate = &gate_f});
}

Tensor Transformer::head_on(const Tensor& x_image, const Tensor& time) const {
  Tensor y = empty(DType::BF16, x_image.shape, device_);
  rms_norm_modulate(x_image, w_.final_norm_video, static_cast<float>(c_.eps), row(time, kHeadShift), row(time, kHeadScale),
                    y);
  return product(y, w_.final_linear_video);  // [h*w, C]
}

namespace {

// RoPE tables on `device` for positions F32 [T, 4] through the bands.
RopeTables tables_for(const Tensor& positions, const Tensor& bands, Device device) {
  const RopeTables t = make_rope_tables(positions, bands);
  return {to_device(t.cos, device), to_device(t.sin, device)};
}

Tensor text_positions(int64_t L) { return joint_positions(0, 0, L); }

// Tables of several samples' positions, concatenated along the token axis.
RopeTables concat_tables(const std::vector<Tensor>& positions, const Tensor& bands, Device device) {
  int64_t T = 0;
  for (const Tensor& p : positions) T += p.dim(0);
  Tensor all = empty(DType::F32, {T, 4});
  int64_t at = 0;
  for (const Tensor& p : positions) {
    Tensor dst = all.rows(at, at + p.dim(0));
    copy_into(dst, p);
    at += p.dim(0);
  }
  return tables_for(all, bands, device);
}

}  // namespace

RopeTables Transformer::rope_for(const std::vector<int64_t>& layout) const {
  return rope_cache_->get(layout, [&] {
    std::vector<Tensor> positions;
    for (size_t k = 0; k + 2 < layout.size(); k += 3) positions.push_back(joint_positions(layout[k], layout[k + 1], layout[k + 2]));
    return concat_tables(positions, w_.rope_bands, device_);
  });
}

Tensor Transformer::text_block(int64_t i, const Tensor& x) const {
  require(i >= 0 && i < c_.text_blocks, "transformer: text block " + std::to_string(i) + " does not exist");
  require(x.dtype == DType::BF16 && x.rank() == 2 && x.dim(1) == c_.dim,
          "transformer: text tokens are " + x.describe() + ", expected BF16 [L, " + std::to_string(c_.dim) + "]");
  const RopeTables rope = tables_for(text_positions(x.dim(0)), w_.rope_bands, device_);
  return host(text_block_on(i, to_device(x, device_), rope, single_sequence(x.dim(0))));
}

Tensor Transformer::joint_block(int64_t i, const Tensor& x, const Tensor& time, int64_t h, int64_t w) const {
  require(i >= 0 && i < c_.layers, "transformer: joint block " + std::to_string(i) + " does not exist");
  require(x.dtype == DType::BF16 && x.rank() == 2 && x.dim(1) == c_.dim && x.dim(0) >= h * w,
          "transformer: joint tokens are " + x.describe() + ", expected BF16 [h*w + L, " + std::to_string(c_.dim) + "]");
  require(time.dtype == DType::BF16 && time.shape == Shape{8, c_.dim},
          "transformer: modulation rows are " + time.describe() + ", expected BF16 [8, " + std::to_string(c_.dim) + "]");
  const RopeTables rope = tables_for(joint_positions(h, w, x.dim(0) - h * w), w_.rope_bands, device_);
  Tensor xd = empty(DType::BF16, x.shape, device_);
  copy_into(xd, x);
  joint_block_on(i, xd, to_device(time, device_), rope, single_sequence(x.dim(0)));
  return host(xd);
}

Tensor Transformer::head(const Tensor& x, const Tensor& time, int64_t h, int64_t w) const {
  require(x.dtype == DType::BF16 && x.rank() == 2 && x.dim(1) == c_.dim && x.dim(0) >= h * w,
          "transformer: joint tokens are " + x.describe() + ", expected BF16 [h*w + L, " + std::to_string(c_.dim) + "]");
  return velocity_of(host(head_on(to_device(x.rows(0, h * w), device_), to_device(time, device_))), h, w);
}

// The head's rows [h*w, C] (bf16, CPU) as the velocity F32 [C, h, w].
Tensor Transformer::velocity_of(const Tensor& v, int64_t h, int64_t w) const {
  Tensor out = empty(DType::F32, {c_.latent_channels, h, w});
  const uint16_t* src = v.ptr<const uint16_t>();
  float* dst = out.ptr<float>();
  const int64_t C = c_.latent_channels, hw = h * w;
  constexpr int64_t kTile = 32;
  parallel_for((hw + kTile - 1) / kTile, [&](int64_t b, int64_t e) {
    for (int64_t n0 = b * kTile; n0 < std::min(hw, e * kTile); n0 += kTile)
      for (int64_t c0 = 0; c0 < C; c0 += kTile)
        for (int64_t n = n0; n < std::min(hw, n0 + kTile); ++n)
          for (int64_t c = c0; c < std::min(C, c0 + kTile); ++c) dst[c * hw + n] = float_from_bf16_bits(src[n * C + c]);
  });
  return out;
}

void Transformer::check_sample(const TransformerSample& s, size_t k) const {
  const std::string which = "transformer sample " + std::to_string(k);
  require(s.latents.dtype == DType::F32 && s.latents.rank() == 3 && s.latents.dim(0) == c_.latent_channels &&
              s.latents.dim(1) > 0 && s.latents.dim(2) > 0,
          which + ": latents are " + s.latents.describe() + ", expected F32 [" + std::to_string(c_.latent_channels) +
              ", h, w]");
  require(s.rows.dtype == DType::BF16 && s.rows.rank() == 2 && s.rows.dim(1) == c_.text_dim && s.rows.dim(0) > 0,
          which + ": prompt rows are " + s.rows.describe() + ", expected BF16 [L, " + std::to_string(c_.text_dim) +
              "] with L >= 1");
  for (int64_t l : s.skip_layers)
    require(l >= 0 && l < c_.layers, which + ": skip layer " + std::to_string(l) + " is not a block (0 .. " +
                                         std::to_string(c_.layers - 1) + ")");
}

}  // namespace tf::moss_image
