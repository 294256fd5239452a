#pragma once
// The FLUX.2 VAE's weights as typed views: every conv and norm parameter BF16 on the compute
// device (an F32 or F16 file is rounded to bf16 as torch does), geometry checked against the config.
#include <string>
#include <vector>

#include "backend/conv/conv2d.h"
#include "core/tensor.h"
#include "families/flux2_vae/config.h"
#include "io/checkpoint.h"

namespace tf::flux2_vae {

struct Conv {
  Tensor w;  // BF16 [Co, Ci, kh, kw] (attention's linears as [C, C, 1, 1])
  Tensor b;  // BF16 [Co]
  PreparedConvWeights prepared;  // w reordered for the op that takes it (prepare_for_kernels), or none
};

struct Norm {
  Tensor gamma, beta;  // BF16 [C]
};

struct Resnet {
  Norm norm1, norm2;
  Conv conv1, conv2;
  bool has_shortcut = false;  // a 1x1 conv where the channel count changes
  Conv shortcut;
};

struct Attention {
  Norm norm;
  Conv q, k, v, out;
};

struct MidBlock {
  Resnet first, second;
  bool has_attention = false;
  Attention attention;
};

struct DownStage {
  std::vector<Resnet> resnets;
  bool has_downsample = false;
  Conv downsample;  // 3x3 stride 2, padded right and bottom
};

struct UpStage {
  std::vector<Resnet> resnets;
  bool has_upsample = false;
  Conv upsample;  // nearest 2x, then this 3x3
};

struct EncoderWeights {
  Conv conv_in;
  std::vector<DownStage> down;
  MidBlock mid;
  Norm norm_out;
  Conv conv_out;  // -> 2 * latent channels (mean, logvar)
  bool has_quant_conv = false;
  Conv quant_conv;
};

struct DecoderWeights {
  bool has_post_quant_conv = false;
  Conv post_quant_conv;
  Conv conv_in;
  MidBlock mid;
  std::vector<UpStage> up;
  Norm norm_out;
  Conv conv_out;
};

// The tensor names of one file layout.
enum class Layout { Diffusers, BFL };

struct Weights {
  Layout layout = Layout::Diffusers;
  bool has_encoder = false, has_decoder = false;
  EncoderWeights encoder;
  DecoderWeights decoder;
  std::vector<float> bn_mean, bn_var;  // [token_width] on the host, bf16 values
};

struct WeightParts {
  bool encoder = true, decoder = true;
};

// Reads the weights the parts need from `ck` onto `device`; errors name the file and tensor.
Weights load_weights(const Checkpoint& ck, const Config& c, Device device, WeightParts parts = {});
// Every convolution's weights reordered once for the op its block runs (resnets' convolutions with their
// GroupNorm folded, the upsamplers through the nearest 2x upsample, the rest plain): TF_CONV_WEIGHTS=prepared.
void prepare_for_kernels(Weights& w);

}  // namespace tf::flux2_vae
