#include "families/flux2_vae/weights.h"

#include <functional>

#include "core/bf16.h"
#include "core/error.h"

namespace tf::flux2_vae {

namespace {

// A tensor of the file as BF16 on the host: BF16 as stored (a view), F32 and F16 rounded to
// nearest-even bf16 the way torch's .to(torch.bfloat16) does.
Tensor as_bf16(const Checkpoint& ck, const std::string& name) {
  Tensor t = ck.get(name);
  if (t.dtype == DType::BF16) return t;
  Tensor out = empty(DType::BF16, t.shape);
  uint16_t* o = out.ptr<uint16_t>();
  if (t.dtype == DType::F32) {
    const float* s = t.ptr<const float>();
    for (int64_t i = 0; i < t.numel(); ++i) o[i] = bf16_bits_from_float(s[i]);
  } else if (t.dtype == DType::F16) {
    const uint16_t* s = t.ptr<const uint16_t>();
    for (int64_t i = 0; i < t.numel(); ++i) o[i] = bf16_bits_from_float(float_from_f16_bits(s[i]));
  } else {
    fail(ck.file_of(name) + ": tensor \"" + name + "\" is " + t.describe() + ", expected BF16, F32 or F16");
  }
  return out;
}

class Loader {
 public:
  Loader(const Checkpoint& ck, Device d, Layout layout) : ck_(ck), device_(d), layout_(layout) {}

  Tensor param(const std::string& name, const Shape& shape) {
    require(ck_.has(name), ck_.where() + ": tensor \"" + name + "\" is missing (expected shape " + shape_str(shape) +
                               ")");
    Tensor t = as_bf16(ck_, name);
    require(t.shape == shape, ck_.file_of(name) + ": tensor \"" + name + "\" is " + t.describe() +
                                  ", expected shape " + shape_str(shape));
    return to_device(t, device_);
  }

  Conv conv(const std::string& prefix, int64_t co, int64_t ci, int64_t k) {
    return {param(prefix + ".weight", {co, ci, k, k}), param(prefix + ".bias", {co}), {}};
  }

  // A linear [C, C] (diffusers) or 1x1 conv [C, C, 1, 1] (BFL), viewed as a 1x1 conv.
  Conv pointwise(const std::string& prefix, int64_t c) {
    const std::string wname = prefix + ".weight";
    require(ck_.has(wname), ck_.where() + ": tensor \"" + wname + "\" is missing");
    const Shape got = ck_.get(wname).shape;
    Tensor w = param(wname, got.size() == 2 ? Shape{c, c} : Shape{c, c, 1, 1});
    return {w.reshaped({c, c, 1, 1}), param(prefix + ".bias", {c}), {}};
  }

  Norm norm(const std::string& prefix, int64_t c) {
    return {param(prefix + ".weight", {c}), param(prefix + ".bias", {c})};
  }

  Resnet resnet(const std::string& prefix, int64_t ci, int64_t co) {
    Resnet r;
    r.norm1 = norm(prefix + ".norm1", ci);
    r.conv1 = conv(prefix + ".conv1", co, ci, 3);
    r.norm2 = norm(prefix + ".norm2", co);
    r.conv2 = conv(prefix + ".conv2", co, co, 3);
    r.has_shortcut = ci != co;
    if (r.has_shortcut)
      r.shortcut = conv(prefix + (layout_ == Layout::BFL ? ".nin_shortcut" : ".conv_shortcut"), co, ci, 1);
    return r;
  }

  MidBlock mid(const std::string& prefix, int64_t c, bool attention) {
    MidBlock m;
    const bool bfl = layout_ == Layout::BFL;
    m.first = resnet(prefix + (bfl ? ".block_1" : ".resnets.0"), c, c);
    m.second = resnet(prefix + (bfl ? ".block_2" : ".resnets.1"), c, c);
    m.has_attention = attention;
    if (attention) {
      const std::string a = prefix + (bfl ? ".attn_1" : ".attentions.0");
      m.attention.norm = norm(a + (bfl ? ".norm" : ".group_norm"), c);
      m.attention.q = pointwise(a + (bfl ? ".q" : ".to_q"), c);
      m.attention.k = pointwise(a + (bfl ? ".k" : ".to_k"), c);
      m.attention.v = pointwise(a + (bfl ? ".v" : ".to_v"), c);
      m.attention.out = pointwise(a + (bfl ? ".proj_out" : ".to_out.0"), c);
    }
    return m;
  }

  std::vector<float> statistic(const std::string& name, int64_t n) {
    Tensor t = as_bf16(ck_, name);
    require(t.shape == Shape{n}, ck_.file_of(name) + ": tensor \"" + name + "\" is " + t.describe() +
                                     ", expected shape [" + std::to_string(n) + "]");
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = float_from_bf16_bits(t.ptr<const uint16_t>()[i]);
    return v;
  }

 private:
  const Checkpoint& ck_;
  Device device_;
  Layout layout_;
};

Layout detect_layout(const Checkpoint& ck) {
  if (ck.has("encoder.conv_in.weight") && (ck.has("encoder.mid.block_1.conv1.weight") ||
                                           ck.has("decoder.mid.block_1.conv1.weight")))
    return Layout::BFL;
  return Layout::Diffusers;
}

}  // namespace

Weights load_weights(const Checkpoint& ck, const Config& c, Device device, WeightParts parts) {
  Weights w;
  w.layout = detect_layout(ck);
  const bool bfl = w.layout == Layout::BFL;
  Loader L(ck, device, w.layout);
  const auto& widths = c.block_out_channels;
  const size_t stages = widths.size();
  if (parts.encoder) {
    EncoderWeights& e = w.encoder;
    e.conv_in = L.conv("encoder.conv_in", widths[0], c.in_channels, 3);
    int64_t ch = widths[0];
    for (size_t i = 0; i < stages; ++i) {
      DownStage s;
      const std::string p = bfl ? "encoder.down." + std::to_string(i) : "encoder.down_blocks." + std::to_string(i);
      for (int64_t j = 0; j < c.layers_per_block; ++j) {
        s.resnets.push_back(L.resnet(p + (bfl ? ".block." : ".resnets.") + std::to_string(j), ch, widths[i]));
        ch = widths[i];
      }
      s.has_downsample = i + 1 < stages;
      if (s.has_downsample) s.downsample = L.conv(p + (bfl ? ".downsample.conv" : ".downsamplers.0.conv"), ch, ch, 3);
      e.down.push_back(std::move(s));
    }
    e.mid = L.mid(bfl ? "encoder.mid" : "encoder.mid_block", ch, c.mid_block_add_attention);
    e.norm_out = L.norm(bfl ? "encoder.norm_out" : "encoder.conv_norm_out", ch);
    e.conv_out = L.conv("encoder.conv_out", 2 * c.latent_channels, ch, 3);
    e.has_quant_conv = c.use_quant_conv;
    if (c.use_quant_conv)
      e.quant_conv = L.conv(bfl ? "encoder.quant_conv" : "quant_conv", 2 * c.latent_channels, 2 * c.latent_channels, 1);
    w.has_encoder = true;
  }
  if (parts.decoder) {
    DecoderWeights& d = w.decoder;
    const auto& dw = c.decoder_widths();
    d.has_post_quant_conv = c.use_post_quant_conv;
    if (c.use_post_quant_conv)
      d.post_quant_conv = L.conv(bfl ? "decoder.post_quant_conv" : "post_quant_conv", c.latent_channels,
                                 c.latent_channels, 1);
    int64_t ch = dw.back();
    d.conv_in = L.conv("decoder.conv_in", ch, c.latent_channels, 3);
    d.mid = L.mid(bfl ? "decoder.mid" : "decoder.mid_block", ch, c.mid_block_add_attention);
    for (size_t i = 0; i < stages; ++i) {
      UpStage s;
      const int64_t out = dw[stages - 1 - i];
      // BFL numbers its up stages from the finest (up.0 is the last one run).
      const std::string p = bfl ? "decoder.up." + std::to_string(stages - 1 - i) : "decoder.up_blocks." + std::to_string(i);
      for (int64_t j = 0; j < c.layers_per_block + 1; ++j) {
        s.resnets.push_back(L.resnet(p + (bfl ? ".block." : ".resnets.") + std::to_string(j), ch, out));
        ch = out;
      }
      s.has_upsample = i + 1 < stages;
      if (s.has_upsample) s.upsample = L.conv(p + (bfl ? ".upsample.conv" : ".upsamplers.0.conv"), ch, ch, 3);
      d.up.push_back(std::move(s));
    }
    d.norm_out = L.norm(bfl ? "decoder.norm_out" : "decoder.conv_norm_out", ch);
    d.conv_out = L.conv("decoder.conv_out", c.out_channels, ch, 3);
    w.has_decoder = true;
  }
  w.bn_mean = L.statistic("bn.running_mean", c.token_width());
  w.bn_var = L.statistic("bn.running_var", c.token_width());
  return w;
}

namespace {

void prepare(Conv& c, const Conv2dGeometry& g, bool upsample, bool norm) {
  c.prepared = prepare_conv2d_weights(c.w, g, upsample, norm);
}

void prepare(Resnet& r) {
  prepare(r.conv1, kConvSame3x3, false, true);
  prepare(r.conv2, kConvSame3x3, false, true);
  if (r.has_shortcut) prepare(r.shortcut, kConvPointwise, false, false);
}

void prepare(MidBlock& m) {
  prepare(m.first);
  prepare(m.second);
  if (!m.has_attention) return;
  for (Conv* c : {&m.attention.q, &m.attention.k, &m.attention.v, &m.attention.out}) prepare(*c, kConvPointwise, false, false);
}

}  // namespace

void prepare_for_kernels(Weights& w) {
  if (w.has_encoder) {
    EncoderWeights& e = w.encoder;
    prepare(e.conv_in, kConvSame3x3, false, false);
    for (DownStage& s : e.down) {
      for (Resnet& r : s.resnets) prepare(r);
      if (s.has_downsample) prepare(s.downsample, kConvDownsample3x3, false, false);
    }
    prepare(e.mid);
    prepare(e.conv_out, kConvSame3x3, false, true);
    if (e.has_quant_conv) prepare(e.quant_conv, kConvPointwise, false, false);
  }
  if (w.has_decoder) {
    DecoderWeights& d = w.decoder;
    if (d.has_post_quant_conv) prepare(d.post_quant_conv, kConvPointwise, false, false);
    prepare(d.conv_in, kConvSame3x3, false, false);
    prepare(d.mid);
    for (UpStage& s : d.up) {
      for (Resnet& r : s.resnets) prepare(r);
      if (s.has_upsample) prepare(s.upsample, kConvSame3x3, true, false);
    }
    prepare(d.conv_out, kConvSame3x3, false, true);
  }
}

}  // namespace tf::flux2_vae
