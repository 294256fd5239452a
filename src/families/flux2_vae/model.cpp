#include "families/flux2_vae/model.h"

#include <atomic>
#include <cmath>

#include "backend/variants.h"
#include "core/error.h"
#include "core/parallel.h"
#include "families/flux2_vae/tokens.h"
#include "io/checkpoint.h"

namespace tf::flux2_vae {

Vae Vae::load(const std::string& model_dir, Device device, WeightParts parts) {
  Vae v;
  v.s_ = std::make_shared<State>();
  State& s = *v.s_;
  s.folder = resolve_component(model_dir, "vae");
  s.config = load_config(s.folder);
  s.device = device;
  const Checkpoint ck = Checkpoint::open_folder(s.folder);
  s.weights = load_weights(ck, s.config, device, parts);
  if (device == Device::CUDA && variant_is<Variant::conv_weights>("prepared")) prepare_for_kernels(s.weights);
  if (parts.encoder) s.encoder_stages = encoder_stages(s.weights, s.config);
  if (parts.decoder) s.decoder_stages = decoder_stages(s.weights, s.config);
  s.encoder = steps_of(s.encoder_stages);
  s.decoder = steps_of(s.decoder_stages);
  return v;
}

Tensor Vae::run_encoder(const Tensor& x, const Progress& progress) const {
  require(!s_->encoder_stages.empty(), "flux2_vae: the encoder's weights were not loaded");
  return run_stages(s_->encoder_stages, to_device(x, device()), config(), progress);
}

Tensor Vae::run_decoder(const Tensor& z, const Progress& progress) const {
  require(!s_->decoder_stages.empty(), "flux2_vae: the decoder's weights were not loaded");
  return run_stages(s_->decoder_stages, to_device(z, device()), config(), progress);
}

Tensor Vae::moments(const Tensor& x, const Progress& progress) const {
  const Config& c = config();
  require(x.dtype == DType::F32 && x.rank() == 3 && x.dim(0) == c.in_channels,
          "picture input is " + x.describe() + ", expected F32 [" + std::to_string(c.in_channels) + ", H, W]");
  const int64_t m = c.picture_multiple();
  require(x.dim(1) % m == 0 && x.dim(2) % m == 0 && x.dim(1) > 0 && x.dim(2) > 0,
          "picture is " + std::to_string(x.dim(2)) + "x" + std::to_string(x.dim(1)) +
              "; width and height must be multiples of " + std::to_string(m));
  const Tensor out = run_encoder(x, progress);
  return to_device(out, Device::CPU);
}

Encoded Vae::encode(const Tensor& x, const Tensor* noise, const Progress& progress) const {
  const Tensor m = moments(x, progress);
  Encoded e;
  e.latents = posterior_latents(m, noise);
  e.feature2 = tokens_from_latents(e.latents, weights().bn_mean, weights().bn_var, config().batch_norm_eps);
  return e;
}

Tensor Vae::decode_on_device(const Tensor& latents, const Progress& progress) const {
  const Config& c = config();
  require(latents.dtype == DType::F32 && latents.rank() == 3 && latents.dim(0) == c.latent_channels &&
              latents.dim(1) > 0 && latents.dim(2) > 0,
          "latents are " + latents.describe() + ", expected F32 [" + std::to_string(c.latent_channels) + ", h, w]");
  return run_decoder(latents, progress);
}

Tensor Vae::decode(const Tensor& latents, const Progress& progress) const {
  Tensor out = to_device(decode_on_device(latents, progress), Device::CPU);
  const float* p = out.ptr<const float>();
  std::atomic<bool> finite{true};
  parallel_for(out.numel(), [&](int64_t b, int64_t e) {
    bool ok = true;
    for (int64_t i = b; i < e; ++i) ok = ok && std::isfinite(p[i]);
    if (!ok) finite = false;
  }, 1 << 16);
  require(finite, "decode: the decoder produced a non-finite value (the latents or weights hold NaN/Inf or overflow); "
                  "no picture written");
  return out;
}

}  // namespace tf::flux2_vae
