#include "families/moss_image/encoder/encoder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "backend/attention/attention.h"
#include "backend/attention/attention_query_key_prep.h"
#include "backend/delta_rule/causal_conv1d_silu_delta_net_prep.h"
#include "backend/embed/embedding.h"
#include "backend/delta_rule/gated_delta_rule.h"
#include "backend/linear/linear.h"
#include "backend/linear/linear_gated_product.h"
#include "backend/norm/rms_norm_gated.h"
#include "backend/norm/rms_norm.h"
#include "backend/rope/rope_tables.h"
#include "backend/elementwise/sigmoid_gate.h"
#include "core/error.h"

namespace tf::moss_image {

Encoder::Encoder(EncoderConfig config, EncoderWeights weights, Device device)
    : config_(std::move(config)), weights_(std::move(weights)), device_(device) {}

Encoder Encoder::load(const std::string& dir, const LoadOptions& options) {
  EncoderConfig config = load_encoder_config((std::filesystem::path(dir) / "config.json").string());
  EncoderWeights weights = load_encoder_weights(dir, config, options);
  return Encoder(std::move(config), std::move(weights), options.device);
}

std::string Encoder::step_name(int64_t step) const {
  if (step == config_.layers) return "final norm";
  return "layer " + std::to_string(step) + (config_.full_attention.at(step) ? " (attention)" : " (DeltaNet)");
}

Encoder::Rope Encoder::rope_for(const SeqOffsets& seq_offsets) const {
  int64_t longest = 1;
  for (size_t s = 0; s + 1 < seq_offsets.size(); ++s) longest = std::max(longest, seq_offsets[s + 1] - seq_offsets[s]);
  return rope_cache_->get(
      longest,
      [&](int64_t rows) {
        RopeTables t = make_rope_tables(rows, config_.rotary_dim, config_.rope_theta);
        return Rope{to_device(t.cos, device_), to_device(t.sin, device_)};
      },
      [](const Rope& r, int64_t rows) { return Rope{r.cos.rows(0, rows), r.sin.rows(0, rows)}; });
}

std::vector<Step> Encoder::stepwise(const SeqOffsets& seq_offsets) const {
  std::vector<Step> out;
  for (int64_t s = 0; s < steps(); ++s)
    out.push_back({step_name(s), [this, s, seq_offsets](const Tensor& rows) { return run_step(s, rows, seq_offsets); }});
  return out;
}

Encoder::Projection Encoder::delta_net(const DeltaNetWeights& w, const Tensor& x, const SeqOffsets& offs) const {
  const EncoderConfig& c = config_;
  const int64_t T = x.dim(0), Hk = c.lin_key_heads, Hv = c.lin_value_heads, dk = c.lin_key_dim, dv = c.lin_value_dim;
  Tensor mixed = empty(DType::BF16, {T, c.conv_channels()}, device_);  // [T, q | k | v]
  Tensor z = empty(DType::BF16, {T, Hv * dv}, device_);
  Tensor b = empty(DType::BF16, {T, Hv}, device_), a = empty(DType::BF16, {T, Hv}, device_);
  linear_shared_input(x, {{&w.in_proj_qkv, &mixed}, {&w.in_proj_z, &z}, {&w.in_proj_b, &b}, {&w.in_proj_a, &a}});
  Tensor q = empty(DType::F32, {T, Hk, dk}, device_), k = empty(DType::F32, {T, Hk, dk}, device_);
  Tensor v = empty(DType::F32, {T, Hv, dv}, device_);
  Tensor beta = empty(DType::F32, {T, Hv}, device_), g = empty(DType::F32, {T, Hv}, device_);
  causal_conv1d_silu_delta_net_prep(mixed, w.conv1d, offs, b, a, w.A_log, w.dt_bias, q, k, v, beta, g);
  mixed = Tensor();
  Tensor o = empty(DType::BF16, {T, Hv, dv}, device_);
  gated_delta_rule(q, k, v, beta, g, offs, o);
  Tensor normed = empty(DType::BF16, {T * Hv, dv}, device_);  // per (token, value head)
  rms_norm_gated(o.reshaped({T * Hv, dv}), z.reshaped({T * Hv, dv}), w.norm, static_cast<float>(c.rms_norm_eps), normed);
  return {normed.reshaped({T, Hv * dv}), &w.out_proj};
}

Encoder::Projection Encoder::attention(const AttentionWeights& w, const Tensor& x, const SeqOffsets& offs,
                                       const Rope& rope) const {
  const EncoderConfig& c = config_;
  const int64_t T = x.dim(0), Hq = c.attn_heads, Hkv = c.kv_heads, d = c.head_dim;
  const float eps = static_cast<float>(c.rms_norm_eps);
  Tensor qg = empty(DType::BF16, {T, Hq * 2 * d}, device_);
  Tensor kraw = empty(DType::BF16, {T, Hkv * d}, device_), v = empty(DType::BF16, {T, Hkv, d}, device_);
  Tensor v_rows = v.reshaped({T, Hkv * d});
  linear_shared_input(x, {{&w.q_proj, &qg}, {&w.k_proj, &kraw}, {&w.v_proj, &v_rows}});
  Tensor q = empty(DType::BF16, {T, Hq, d}, device_), k = empty(DType::BF16, {T, Hkv, d}, device_);
  Tensor gate = empty(DType::BF16, {T, Hq, d}, device_);
  attention_query_key_prep(qg, kraw, w.q_norm, w.k_norm, eps, rope.cos, rope.sin, offs, q, k, gate);
  qg = Tensor();
  kraw = Tensor();
  Tensor o = empty(DType::BF16, {T, Hq, d}, device_);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  tf::attention(q, k, v, {.scale = scale, .mask = AttentionMask::causal, .sequences = offs}, o);
  sigmoid_gate(o, gate, o);
  return {o.reshaped({T, Hq * d}), &w.o_proj};
}

Encoder::Projection Encoder::mlp(const LayerWeights& w, const Tensor& x) const {
  Tensor gated = empty(DType::BF16, {x.dim(0), config_.intermediate}, device_);
  linear_gated_product(x, w.gate_proj, w.up_proj, GatedActivation::silu, gated);
  return {gated, &w.down_proj};
}

void Encoder::layer(int64_t i, Tensor& h, Tensor& x, const SeqOffsets& offs, const Rope& rope,
                    const Tensor* next_norm) const {
  const LayerWeights& w = weights_.layers.at(i);
  {
    const Projection mixer = w.full_attention ? attention(w.attn, x, offs, rope) : delta_net(w.delta, x, offs);
    // h += mixer; x = norm(h)
    linear(mixer.x, *mixer.w, {.residual = &h, .norm_weight = &w.post_attention_layernorm, .norm = norm(), .norm_out = &x});
  }
  const Projection out = mlp(w, x);
  // h += mlp; x = next norm(h) (the next layer's input, or the final rows)
  linear(out.x, *out.w, {.residual = &h, .norm_weight = next_norm, .norm = norm(), .norm_out = next_norm ? &x : nullptr});
}

void Encoder::layers(Tensor& h, Tensor& x, const SeqOffsets& offs, const Rope& rope, const Progress& progress) const {
  const int64_t L = config_.layers;
  rms_norm(h, L > 0 ? weights_.layers.at(0).input_layernorm : weights_.norm, norm(), x);
  for (int64_t i = 0; i < L; ++i) {
    layer(i, h, x, offs, rope, i + 1 < L ? &weights_.layers.at(i + 1).input_layernorm : &weights_.norm);
    report(progress, step_name(i), i + 1, steps());
  }
}

Tensor Encoder::final_norm(const Tensor& h) const {
  Tensor y = empty(DType::BF16, h.shape, device_);
  rms_norm(h, weights_.norm, norm(), y);
  return y;
}

namespace {

// Whole sequences [first, last) packed into one forward: at most kLinearPackedRows rows, or one
// longer sequence alone, so a packed prompt gets the bytes it gets alone.
std::vector<std::pair<size_t, size_t>> packs_of(const SeqOffsets& offs) {
  std::vector<std::pair<size_t, size_t>> packs;
  for (size_t s = 0; s + 1 < offs.size(); ++s) {
    if (!packs.empty()) {
      auto& [first, last] = packs.back();
      // an empty sequence adds no rows; otherwise the pack with this sequence must stay in the limit
      if (offs[s + 1] == offs[s] || offs[s + 1] - offs[first] <= kLinearPackedRows) {
        last = s + 1;
        continue;
      }
    }
    packs.emplace_back(s, s + 1);
  }
  return packs;
}

}  // namespace

Tensor Encoder::forward(const std::vector<int32_t>& ids, const SeqOffsets& offs, const Progress& progress,
                        Device out_device) const {
  require(out_device == Device::CPU || out_device == device_,
          std::string("encoder: rows can be returned on the CPU or on the encoder's own device (") +
              device_name(device_) + "), not on " + device_name(out_device));
  const int64_t T = static_cast<int64_t>(ids.size());
  check_seq_offsets("encoder forward", offs, T);
  for (int64_t t = 0; t < T; ++t)
    if (ids[t] < 0 || ids[t] >= config_.vocab_size)
      fail("encoder: token id " + std::to_string(ids[t]) + " at position " + std::to_string(t) +
           " is outside the vocabulary [0, " + std::to_string(config_.vocab_size) + ")");
  const auto packs = packs_of(offs);
  if (packs.size() <= 1) return forward_pack(ids, offs, progress, out_device);
  Tensor out = empty(DType::BF16, {T, config_.hidden}, out_device);
  const int64_t total = static_cast<int64_t>(packs.size()) * steps();
  for (size_t p = 0; p < packs.size(); ++p) {
    const auto [first, last] = packs[p];
    const int64_t begin = offs[first], end = offs[last];
    SeqOffsets sub;
    for (size_t s = first; s <= last; ++s) sub.push_back(offs[s] - begin);
    const Progress pack_progress = offset_progress(progress, static_cast<int64_t>(p) * steps(), total);
    Tensor rows =
        forward_pack(std::vector<int32_t>(ids.begin() + begin, ids.begin() + end), sub, pack_progress, out_device);
    Tensor dst = out.rows(begin, end);
    copy_into(dst, rows);
  }
  return out;
}

Tensor Encoder::forward_pack(const std::vector<int32_t>& ids, const SeqOffsets& offs, const Progress& progress,
                             Device out_device) const {
  const int64_t T = static_cast<int64_t>(ids.size());
  Tensor host_ids = empty(DType::I32, {T});
  std::copy(ids.begin(), ids.end(), host_ids.ptr<int32_t>());
  if (Tensor out = forward_recorded(host_ids, offs, out_device); out.data) {
    report(progress, step_name(steps() - 1), steps(), steps());
    return out;
  }
  Tensor dev_ids = to_device(host_ids, device_);
  Tensor h = empty(DType::BF16, {T, config_.hidden}, device_), x = empty(DType::BF16, {T, config_.hidden}, device_);
  embedding(weights_.embed_tokens, dev_ids, h, IdCheck::by_caller);  // forward() checked the ids
  layers(h, x, offs, rope_for(offs), progress);  // x ends as the final norm's rows
  Tensor out = to_device(x, out_device);  // the device's own rows where they stay there
  report(progress, step_name(steps() - 1), steps(), steps());
  return out;
}

Tensor Encoder::forward_recorded(const Tensor& host_ids, const SeqOffsets& offs, Device out_device) const {
  const int64_t T = host_ids.dim(0);
  if (!recording_supported(device_) || T == 0 || T > kLinearPackedRows) return Tensor();
  const auto record = [&](RecordedForward& r) {
    r.ids = empty(DType::I32, {T}, device_);
    r.h = empty(DType::BF16, {T, config_.hidden}, device_);
    r.out = empty(DType::BF16, {T, config_.hidden}, device_);
    r.rope = rope_for(offs);
    r.work = RecordedWork::record(device_, [&] {
      embedding(weights_.embed_tokens, r.ids, r.h, IdCheck::by_caller);  // forward() checked the ids
      layers(r.h, r.out, offs, r.rope, Progress());
    });
  };
  Tensor out;
  const auto stale = [](const RecordedForward& r) { return !r.work.under_current_variants(); };
  recorded_->replay(offs, record, stale, [&](RecordedForward& r) {
    copy_into(r.ids, host_ids);  // the previous replay has ended: its output was copied back
    r.work.replay();
    if (out_device == Device::CPU) {
      out = to_device(r.out, Device::CPU);
    } else {
      out = empty(DType::BF16, r.out.shape, out_device);  // a copy: the next replay rewrites r.out
      copy_into(out, r.out);
    }
  });
  return out;  // empty: this layout runs eagerly
}

Tensor Encoder::run_step(int64_t step, const Tensor& rows, const SeqOffsets& offs) const {
  if (step < 0 || step > config_.layers)
    fail("encoder: step " + std::to_string(step) + " does not exist (0 .. " + std::to_string(config_.layers) + ")");
  if (rows.dtype != DType::BF16 || rows.rank() != 2 || rows.dim(1) != config_.hidden)
    fail("encoder step " + std::to_string(step) + ": rows are " + rows.describe() + ", expected BF16 [T, " +
         std::to_string(config_.hidden) + "]");
  check_seq_offsets("encoder step", offs, rows.dim(0));
  Tensor h = empty(DType::BF16, rows.shape, device_);
  copy_into(h, rows);
  if (step == config_.layers) return to_device(final_norm(h), Device::CPU);
  Tensor x = empty(DType::BF16, rows.shape, device_);
  rms_norm(h, weights_.layers.at(step).input_layernorm, norm(), x);
  layer(step, h, x, offs, rope_for(offs), nullptr);
  return to_device(h, Device::CPU);
}

}  // namespace tf::moss_image
