#include "families/flux2_vae/stages.h"

#include "core/error.h"
#include "families/flux2_vae/blocks.h"

namespace tf::flux2_vae {

std::vector<Step> encoder_stages(const Weights& w, const Config& c) {
  require(w.has_encoder, "flux2_vae: the encoder's weights were not loaded");
  const EncoderWeights& e = w.encoder;
  const int g = static_cast<int>(c.norm_num_groups);
  const float eps = c.norm_eps;
  std::vector<Step> s;
  s.push_back({"enc.conv_in", [&e](const Tensor& x) { return conv3x3(e.conv_in, x); }});
  for (size_t i = 0; i < e.down.size(); ++i)
    s.push_back({"enc.down." + std::to_string(i), [&e, i, g, eps](const Tensor& x) {
                   const DownStage& d = e.down[i];
                   Tensor h = x;
                   for (const Resnet& r : d.resnets) h = resnet(r, h, g, eps);
                   return d.has_downsample ? downsample(d.downsample, h) : h;
                 }});
  s.push_back({"enc.mid", [&e, g, eps](const Tensor& x) { return mid_block(e.mid, x, g, eps); }});
  s.push_back({"enc.moments", [&e, g, eps](const Tensor& x) {
                 Tensor m = norm_conv3x3(e.norm_out, e.conv_out, x, g, eps);
                 return e.has_quant_conv ? conv1x1(e.quant_conv, m) : m;
               }});
  return s;
}

std::vector<Step> decoder_stages(const Weights& w, const Config& c) {
  require(w.has_decoder, "flux2_vae: the decoder's weights were not loaded");
  const DecoderWeights& d = w.decoder;
  const int g = static_cast<int>(c.norm_num_groups);
  const float eps = c.norm_eps;
  std::vector<Step> s;
  s.push_back({"dec.conv_in", [&d](const Tensor& z) {
                 if (!d.has_post_quant_conv) return conv3x3(d.conv_in, z);
                 return conv3x3(d.conv_in, conv1x1(d.post_quant_conv, z));
               }});
  s.push_back({"dec.mid", [&d, g, eps](const Tensor& x) { return mid_block(d.mid, x, g, eps); }});
  for (size_t i = 0; i < d.up.size(); ++i)
    s.push_back({"dec.up." + std::to_string(i), [&d, i, g, eps](const Tensor& x) {
                   const UpStage& u = d.up[i];
                   Tensor h = x;
                   for (const Resnet& r : u.resnets) h = resnet(r, h, g, eps);
                   return u.has_upsample ? upsample(u.upsample, h) : h;
                 }});
  s.push_back({"dec.out", [&d, g, eps](const Tensor& x) { return norm_conv3x3(d.norm_out, d.conv_out, x, g, eps); }});
  return s;
}

}  // namespace tf::flux2_vae
