#include "families/flux2_vae/stages.h"

#include "core/error.h"
#include "families/flux2_vae/blocks.h"

namespace tf::flux2_vae {

std::vector<Stage> encoder_stages(const Weights& w, const Config& c) {
  require(w.has_encoder, "flux2_vae: the encoder's weights were not loaded");
  const EncoderWeights& e = w.encoder;
  const int g = static_cast<int>(c.norm_num_groups);
  const float eps = c.norm_eps;
  std::vector<Stage> s;
  s.push_back({"enc.conv_in",
               [&e](const Tensor& x, const GroupStats*, GroupStats* ys) { return conv3x3(e.conv_in, x, nullptr, ys); }});
  for (size_t i = 0; i < e.down.size(); ++i)
    s.push_back({"enc.down." + std::to_string(i),
                 [&e, i, g, eps](const Tensor& x, const GroupStats* xs, GroupStats* ys) {
                   const DownStage& d = e.down[i];
                   const Tensor h = resnets(d.resnets, x, g, eps, xs, d.has_downsample ? nullptr : ys);
                   return d.has_downsample ? downsample(d.downsample, h, ys) : h;
                 },
                 true});
  s.push_back({"enc.mid",
               [&e, g, eps](const Tensor& x, const GroupStats* xs, GroupStats* ys) {
                 return mid_block(e.mid, x, g, eps, xs, ys);
               },
               true});
  s.push_back({"enc.moments",
               [&e, g, eps](const Tensor& x, const GroupStats* xs, GroupStats*) {
                 Tensor m = norm_conv3x3(e.norm_out, e.conv_out, x, g, eps, nullptr, nullptr, xs);
                 return e.has_quant_conv ? conv1x1(e.quant_conv, m) : m;
               },
               true});
  return s;
}

std::vector<Stage> decoder_stages(const Weights& w, const Config& c) {
  require(w.has_decoder, "flux2_vae: the decoder's weights were not loaded");
  const DecoderWeights& d = w.decoder;
  const int g = static_cast<int>(c.norm_num_groups);
  const float eps = c.norm_eps;
  std::vector<Stage> s;
  s.push_back({"dec.conv_in", [&d](const Tensor& z, const GroupStats*, GroupStats* ys) {
                 if (!d.has_post_quant_conv) return conv3x3(d.conv_in, z, nullptr, ys);
                 return conv3x3(d.conv_in, conv1x1(d.post_quant_conv, z), nullptr, ys);
               }});
  s.push_back({"dec.mid",
               [&d, g, eps](const Tensor& x, const GroupStats* xs, GroupStats* ys) {
                 return mid_block(d.mid, x, g, eps, xs, ys);
               },
               true});
  for (size_t i = 0; i < d.up.size(); ++i)
    s.push_back({"dec.up." + std::to_string(i),
                 [&d, i, g, eps](const Tensor& x, const GroupStats* xs, GroupStats* ys) {
                   const UpStage& u = d.up[i];
                   const Tensor h = resnets(u.resnets, x, g, eps, xs, u.has_upsample ? nullptr : ys);
                   return u.has_upsample ? upsample(u.upsample, h, ys) : h;
                 },
                 true});
  s.push_back({"dec.out",
               [&d, g, eps](const Tensor& x, const GroupStats* xs, GroupStats*) {
                 return norm_conv3x3(d.norm_out, d.conv_out, x, g, eps, nullptr, nullptr, xs);
               },
               true});
  return s;
}

std::vector<Step> steps_of(const std::vector<Stage>& stages) {
  std::vector<Step> steps;
  for (const Stage& st : stages)
    steps.push_back({st.name, [run = st.run](const Tensor& x) { return run(x, nullptr, nullptr); }});
  return steps;
}

Tensor run_stages(const std::vector<Stage>& stages, Tensor x, const Config& c, const Progress& progress) {
  const int64_t total = static_cast<int64_t>(stages.size());
  GroupStats given, taken;  // this stage's input's statistics (where the stage before took them), its output's
  bool have = false;
  for (int64_t i = 0; i < total; ++i) {
    const bool want = i + 1 < total && stages[i + 1].norms_input;
    if (want) taken = make_group_stats(static_cast<int>(c.norm_num_groups), c.norm_eps, x.device);
    x = stages[i].run(x, have ? &given : nullptr, want ? &taken : nullptr);
    have = want;
    if (want) given = std::move(taken);
    report(progress, stages[i].name, i + 1, total);
  }
  return x;
}

}  // namespace tf::flux2_vae
