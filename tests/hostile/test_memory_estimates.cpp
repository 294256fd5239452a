// The memory estimates the tools refuse absurd sizes by: bounds that follow from the block
// structure, for the released geometries.
#include <gtest/gtest.h>

#include "families/flux2_vae/config.h"
#include "families/flux2_vae/memory.h"
#include "families/moss_image/encoder/config.h"
#include "families/moss_image/encoder/memory.h"
#include "families/moss_image/transformer/config.h"
#include "families/moss_image/transformer/memory.h"

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
double act(double c, double h, double w) { return 4 * c * h * w; }
}  // namespace

TEST(MemoryEstimates, ReleasedVaeDecodeHoldsItsLargestUpsample) {
  const tf::flux2_vae::Config c;  // the released geometry
  const double need = tf::flux2_vae::decode_memory(c, 1024, 1024, tf::Device::CPU).bytes;
  // dec.up.2's upsample: its 256-channel 512x512 input, the nearest 2x copy and the conv's output
  EXPECT_GE(need, act(256, 512, 512) + 2 * act(256, 1024, 1024));
  EXPECT_LE(need, 8 * kGiB) << "a 1024x1024 decode must fit an ordinary machine";
  // dec.up.3's first resnet: the 256-channel input (held twice), norm1 and conv1's 128-channel output
  EXPECT_GE(need, 3 * act(256, 1024, 1024) + act(128, 1024, 1024));
}

TEST(MemoryEstimates, ReleasedVaeEncodeHoldsItsFullSizeResnet) {
  const tf::flux2_vae::Config c;
  const double need = tf::flux2_vae::encode_memory(c, 1024, 1024, tf::Device::CPU).bytes;
  // enc.down.0's resnets: input, norm and conv outputs of 128 channels at full size
  EXPECT_GE(need, 3 * act(128, 1024, 1024));
  EXPECT_LE(need, 8 * kGiB);
}

TEST(MemoryEstimates, ReleasedVaeAtTheSideLimitFitsNoDevice) {
  const tf::flux2_vae::Config c;
  for (tf::Device d : {tf::Device::CPU, tf::Device::CUDA}) {
    EXPECT_GT(tf::flux2_vae::encode_memory(c, 16384, 16384, d).bytes, 200 * kGiB);
    EXPECT_GT(tf::flux2_vae::decode_memory(c, 16384, 16384, d).bytes, 200 * kGiB);
  }
  // CUDA's attention keeps a block of up to 4096 query rows of scores over all keys
  const double n = 2048.0 * 2048.0;
  EXPECT_GE(tf::flux2_vae::decode_memory(c, 16384, 16384, tf::Device::CUDA).bytes, 4 * 4096 * n);
}

TEST(MemoryEstimates, GrowWithThePicture) {
  const tf::flux2_vae::Config c;
  double prev_e = 0, prev_d = 0;
  for (int64_t side : {16, 64, 256, 1024, 4096}) {
    const double e = tf::flux2_vae::encode_memory(c, side, side, tf::Device::CPU).bytes;
    const double d = tf::flux2_vae::decode_memory(c, side, side, tf::Device::CPU).bytes;
    EXPECT_GT(e, prev_e) << side;
    EXPECT_GT(d, prev_d) << side;
    prev_e = e;
    prev_d = d;
  }
}

TEST(MemoryEstimates, RefusalStatesSizeEstimateAndAvailable) {
  const tf::flux2_vae::Config c;
  try {
    tf::flux2_vae::require_memory_for(tf::flux2_vae::Direction::Decode, c, 8192, 4096, tf::Device::CPU,
                                      {uint64_t(16) << 30, "physical memory"}, "--latents z.safetensors");
    FAIL() << "an 8192x4096 decode fits 16 GiB?";
  } catch (const std::exception& e) {
    const std::string m = e.what();
    for (const char* s : {"--latents z.safetensors", "8192x4096", "GiB", "16 GiB available (physical memory)",
                          "smaller picture", "fits)"})
      EXPECT_NE(m.find(s), std::string::npos) << s << " missing from: " << m;
  }
  EXPECT_NO_THROW(tf::flux2_vae::require_memory_for(tf::flux2_vae::Direction::Decode, c, 512, 512, tf::Device::CPU,
                                                    {uint64_t(16) << 30, "physical memory"}, "x"));
}

TEST(MemoryEstimates, ReleasedEncoderAtMaxPositionsIsRefusedOnASmallMachine) {
  const auto c = tf::moss_image::released_encoder_config();
  const double full = tf::moss_image::encoder_memory(c, c.max_positions).bytes;
  // at least the MLP's gate and up rows (bf16) of every token
  EXPECT_GE(full, double(c.max_positions) * 2 * 2 * double(c.intermediate));
  EXPECT_GT(full, 24 * kGiB);
  EXPECT_LT(tf::moss_image::encoder_memory(c, 1000).bytes, 1 * kGiB);
  try {
    tf::moss_image::require_memory_for_tokens(c, c.max_positions, {uint64_t(24) << 30, "physical memory"},
                                              "--prompt-file p.txt");
    FAIL() << "a max-length prompt fits 24 GiB?";
  } catch (const std::exception& e) {
    const std::string m = e.what();
    for (const char* s : {"--prompt-file p.txt", "262144 tokens", "24 GiB available (physical memory)", "tokens fit"})
      EXPECT_NE(m.find(s), std::string::npos) << s << " missing from: " << m;
  }
}

TEST(MemoryEstimates, ReleasedTransformerWeightsAndAGuidanceStep) {
  const tf::moss_image::TransformerConfig c = tf::moss_image::TransformerConfig::released();
  const double weights = tf::moss_image::transformer_weight_bytes(c);
  EXPECT_NEAR(weights / 1e9, 10.16, 0.05) << "the released file holds 10.16 GB of bf16";
  // a 1024^2 guidance step: two samples of 4,096 image tokens; the MLP's up|gate (2 x 8192 bf16 a token)
  const double step = tf::moss_image::transformer_memory(c, {4096, 4096}, {100, 20}).bytes;
  EXPECT_GE(step, 8216 * 2.0 * 2 * 8192);
  EXPECT_LE(step, 4 * kGiB);
  // a 16384^2 picture (1M image tokens a branch) fits no device of today
  EXPECT_GE(tf::moss_image::transformer_memory(c, {1 << 20, 1 << 20}, {100, 20}).bytes, 141 * kGiB);
  EXPECT_EQ(tf::moss_image::transformer_memory(c, {4096}, {100}).peak, "MLP");
}
