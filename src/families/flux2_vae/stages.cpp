#include "families/flux2_vae/stages.h"

#include <utility>

#include "core/error.h"
#include "families/flux2_vae/blocks.h"

namespace tf::flux2_vae {

namespace {

// A stage run alone (the gate: no moments come with its input) or in turn (run_steps: they do).
Step stage(std::string name, std::function<Carried(const Carried&)> f) {
  return {std::move(name), [f](const Tensor& x) { return f({x, {}}).x; }, f};
}

// The stage's resnets, the last one's moments given only where a GroupNorm reads its output next.
Carried resnets(const std::vector<Resnet>& rs, Carried h, int g, float eps, bool last_moments) {
  for (size_t j = 0; j < rs.size(); ++j) h = resnet(rs[j], h, g, eps, j + 1 < rs.size() || last_moments);
  return h;
}

}  // namespace

std::vector<Step> encoder_stages(const Weights& w, const Config& c) {
  require(w.has_encoder, "flux2_vae: the encoder's weights were not loaded");
  const EncoderWeights& e = w.encoder;
  const int g = static_cast<int>(c.norm_num_groups);
  const float eps = c.norm_eps;
  std::vector<Step> s;
  s.push_back(stage("enc.conv_in", [&e](const Carried& x) { return conv3x3(e.conv_in, x.x, true); }));
  for (size_t i = 0; i < e.down.size(); ++i)
    s.push_back(stage("enc.down." + std::to_string(i), [&e, i, g, eps](const Carried& x) {
      const DownStage& d = e.down[i];
      const Carried h = resnets(d.resnets, x, g, eps, !d.has_downsample);
      return d.has_downsample ? downsample(d.downsample, h.x, true) : h;
    }));
  s.push_back(stage("enc.mid", [&e, g, eps](const Carried& x) { return mid_block(e.mid, x, g, eps, true); }));
  s.push_back(stage("enc.moments", [&e, g, eps](const Carried& x) {
    const Carried m = norm_conv3x3(e.norm_out, e.conv_out, x, g, eps, nullptr, false);
    return e.has_quant_conv ? Carried{conv1x1(e.quant_conv, m.x), {}} : m;
  }));
  return s;
}

std::vector<Step> decoder_stages(const Weights& w, const Config& c) {
  require(w.has_decoder, "flux2_vae: the decoder's weights were not loaded");
  const DecoderWeights& d = w.decoder;
  const int g = static_cast<int>(c.norm_num_groups);
  const float eps = c.norm_eps;
  std::vector<Step> s;
  s.push_back(stage("dec.conv_in", [&d](const Carried& z) {
    if (!d.has_post_quant_conv) return conv3x3(d.conv_in, z.x, true);
    return conv3x3(d.conv_in, conv1x1(d.post_quant_conv, z.x), true);
  }));
  s.push_back(stage("dec.mid", [&d, g, eps](const Carried& x) { return mid_block(d.mid, x, g, eps, true); }));
  for (size_t i = 0; i < d.up.size(); ++i)
    s.push_back(stage("dec.up." + std::to_string(i), [&d, i, g, eps](const Carried& x) {
      const UpStage& u = d.up[i];
      const Carried h = resnets(u.resnets, x, g, eps, !u.has_upsample);
      return u.has_upsample ? upsample(u.upsample, h.x, true) : h;
    }));
  s.push_back(stage("dec.out", [&d, g, eps](const Carried& x) {
    return norm_conv3x3(d.norm_out, d.conv_out, x, g, eps, nullptr, false);
  }));
  return s;
}

}  // namespace tf::flux2_vae
