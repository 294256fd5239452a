#include "check/gate/flux2_vae.h"

#include <algorithm>
#include <cstdlib>

#include "check/gate/case.h"
#include "check/gate/convert.h"
#include "check/gate/gate.h"
#include "core/error.h"
#include "families/common/steps.h"
#include "families/flux2_vae/pixels.h"
#include "families/flux2_vae/tokens.h"

namespace tf::check::gate {

namespace {


bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

RgbImage picture(const Case& c, const std::string& name, bool whole) {
  const Expected e{{DType::U8}, {-1, -1, 3}, "[H, W, 3]", ""};
  const Tensor t = whole ? c.whole(name, e) : c.input(name, e);
  RgbImage img;
  img.height = t.dim(0);
  img.width = t.dim(1);
  img.rgb.assign(t.ptr<const uint8_t>(), t.ptr<const uint8_t>() + t.numel());
  return img;
}


}  // namespace

const std::vector<std::string>& flux2_vae_plants() {
  static const std::vector<std::string> plants{"padding-row"};
  return plants;
}

GateReport run_flux2_vae_gate(const flux2_vae::Vae& vae, const std::string& case_path, const Plant& plant,
                              std::ostream& out) {
  require(plant.kind != Plant::Kind::Extra || plant.is_extra("padding-row"),
          "--plant " + plant.describe() + ": the VAE gate has no such plant");
  const Case c = Case::open(case_path, kFlux2VaeComponent);
  const auto& cfg = vae.config();
  const RgbImage image = picture(c, "image", false);
  const Tensor x = flux2_vae::picture_to_input(image, cfg.picture_multiple(), case_path + ": tensor \"in.image\"");
  const int64_t h = image.height / cfg.downscale(), w = image.width / cfg.downscale(), cz = cfg.latent_channels;
  const std::string latent_why = "the latents of in.image under this model";
  const Tensor noise = c.input("noise", {{DType::F32}, {cz, h, w}, "", latent_why});
  const Tensor latents = c.input("latents", {{DType::F32}, {cz, h, w}, "", latent_why});
  out << "picture " << image.width << "x" << image.height << "\n";
  GateRun run(c, plant, "tokens.sample", out);

  std::string previous;
  Shape previous_shape;
  for (const std::string& name : c.steps()) {
    const std::string why = "this model's " + name;
    const bool tokens = starts(name, "tokens.");
    Tensor got;
    if (name == "tokens.sample" || name == "tokens.mean") {
      const Tensor moments = to_f32(c.reference_output("enc.moments", {2 * cz, h, w}, "this model's enc.moments"));
      const Tensor z = flux2_vae::posterior_latents(moments, name == "tokens.sample" ? &noise : nullptr);
      got = flux2_vae::tokens_from_latents(z, vae.weights().bn_mean, vae.weights().bn_var, cfg.batch_norm_eps);
      if (plant.is_extra("padding-row") && name == "tokens.sample") got.ptr<float>()[2 * got.dim(1) + 7] = 1e-3f;
    } else {
      const bool enc = starts(name, "enc.");
      const Step& st = find_step(enc ? vae.encoder() : vae.decoder(), name, c.path());
      Tensor in;
      if (name == "enc.conv_in") in = x;
      else if (name == "dec.conv_in") in = latents;
      else if (previous.empty() || starts(previous, "enc.") != enc)
        fail(case_path + ": step \"" + name + "\" takes the f32 output of the step before it, but the case's metadata " +
             "\"steps\" lists none (the encoder's must start at enc.conv_in, the decoder's at dec.conv_in)");
      else in = to_f32(c.reference_output(previous, previous_shape, "this model's " + previous));
      got = to_device(st.run(to_device(in, vae.device())), Device::CPU);
      previous = name;
      previous_shape = got.shape;
    }
    run.step(name, got, tokens ? Rows::Tokens : Rows::Positions, why);
  }

  // Whole runs, from the picture and from the latents: printed; the picture's levels and the
  // repeat are gated.
  const flux2_vae::Encoded e1 = vae.encode(x, &noise);
  flux2_vae::Encoded e2 = vae.encode(x, &noise);
  if (plant.kind == Plant::Kind::Repeat) flip_one_bit(e2.feature2);
  run.repeat(same_bytes(e1.feature2, e2.feature2) && same_bytes(e1.latents, e2.latents));
  const std::string f2_why = "this model's feature2";
  run.whole("encode, picture -> feature2 (sample)",
            compare_rows(e1.feature2, c.reference_output("tokens.sample", e1.feature2.shape, f2_why)));
  if (c.has("f32.tokens.mean"))
    run.whole("encode, picture -> feature2 (mean)",
              compare_rows(vae.encode(x, nullptr).feature2, c.reference_output("tokens.mean", e1.feature2.shape, f2_why)));
  const Tensor decoded = vae.decode(latents);
  run.whole("decode, latents -> dec.out",
            compare_positions(decoded, c.reference_output("dec.out", decoded.shape, "this model's decoded picture")));
  const RgbImage ours = flux2_vae::output_to_picture(decoded);
  const RgbImage want = picture(c, "picture", true);
  require(want.width == ours.width && want.height == ours.height,
          case_path + ": tensor \"whole.picture\" is " + std::to_string(want.width) + "x" + std::to_string(want.height) +
              ", expected the decoded picture's " + std::to_string(ours.width) + "x" + std::to_string(ours.height));
  int levels = 0;
  for (size_t i = 0; i < ours.rgb.size(); ++i) levels = std::max(levels, std::abs(int(ours.rgb[i]) - int(want.rgb[i])));
  run.fact("picture", std::to_string(levels) + (levels == 1 ? " level" : " levels") + (levels <= 1 ? " off" : " OFF") +
                          " (limit 1)", levels <= 1);
  return run.finish();
}

}  // namespace tf::check::gate
