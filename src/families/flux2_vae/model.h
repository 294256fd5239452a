#pragma once
// The FLUX.2 VAE as tools use it: load a checkpoint onto a device, picture -> Idol's feature2,
// latents -> picture. Activations stay on the device; the moments and latents (small) cross to
// the host for the token math.
#include <functional>
#include <memory>
#include <string>

#include "families/common/progress.h"
#include "families/flux2_vae/config.h"
#include "families/flux2_vae/stages.h"
#include "families/flux2_vae/weights.h"

namespace tf::flux2_vae {

struct Encoded {
  Tensor feature2;  // F32 [5 + (H/16)(W/16), 4 Cz] (CPU)
  Tensor latents;   // F32 [Cz, H/8, W/8] (CPU): the posterior sample (or mean)
};

class Vae {
 public:
  // model_dir: a pipeline folder (model_index.json, vae/) or the VAE's own folder.
  static Vae load(const std::string& model_dir, Device device, WeightParts parts = {});

  const Config& config() const { return s_->config; }
  const Weights& weights() const { return s_->weights; }
  Device device() const { return s_->device; }
  const std::string& folder() const { return s_->folder; }
  // The stages, the steps the reference gate checks one at a time (each alone, its statistics its own).
  const std::vector<Step>& encoder() const { return s_->encoder; }
  const std::vector<Step>& decoder() const { return s_->decoder; }
  // The stages in turn on the VAE's device, each handing the next its output's GroupNorm statistics
  // (run_stages): the encoder's picture -> moments, the decoder's latents -> picture.
  Tensor run_encoder(const Tensor& x, const Progress& progress = nullptr) const;
  Tensor run_decoder(const Tensor& z, const Progress& progress = nullptr) const;

  // x: F32 [3, H, W] (CPU or the VAE's device, the VAE's range) -> moments F32 [2 Cz, H/8, W/8] (CPU).
  Tensor moments(const Tensor& x, const Progress& progress = nullptr) const;
  // noise: F32 [Cz, H/8, W/8] for Idol's posterior sample, or null for the mean.
  Encoded encode(const Tensor& x, const Tensor* noise, const Progress& progress = nullptr) const;
  // latents: F32 [Cz, h, w] (CPU) -> picture F32 [3, 8h, 8w] (CPU); refuses a non-finite result.
  Tensor decode(const Tensor& latents, const Progress& progress = nullptr) const;
  // The same picture left on the VAE's device (latents on any device), not scanned for non-finite values.
  Tensor decode_on_device(const Tensor& latents, const Progress& progress = nullptr) const;

 private:
  struct State {
    Config config;
    Weights weights;
    Device device = Device::CPU;
    std::string folder;
    std::vector<Stage> encoder_stages, decoder_stages;
    std::vector<Step> encoder, decoder;
  };
  std::shared_ptr<State> s_;
};

}  // namespace tf::flux2_vae
