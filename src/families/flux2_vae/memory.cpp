#include "families/flux2_vae/memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace tf::flux2_vae {

namespace {

// Bytes of an F32 activation [c, h, w]; double, so no size can overflow.
double act(int64_t c, int64_t h, int64_t w) { return 4.0 * double(c) * double(h) * double(w); }

// Tracks the largest live set seen; `stage_in` is the stage's input, which run_stages holds
// while the stage runs.
struct Walk : PeakWalk {
  explicit Walk(Device d) : dev(d) {}
  Device dev;
  // resnet(): the input, norm1's output and conv1's result, then conv1's result, the shortcut and
  // the output.
  void resnet(double stage_in, int64_t ci, int64_t co, int64_t h, int64_t w, const std::string& stage) {
    live(stage_in + act(ci, h, w) + std::max(act(ci, h, w) + act(co, h, w), 3 * act(co, h, w)), stage);
  }
  // mid_block(): resnet, attention (x, its norm, q, k, v, the result and the output, plus the
  // backend's scratch: v transposed on the CPU, a query block of scores on CUDA), resnet.
  void mid(double stage_in, int64_t c, int64_t h, int64_t w, bool attention, const std::string& stage) {
    resnet(stage_in, c, c, h, w, stage);
    if (attention) {
      const double n = double(h) * double(w);
      const double scratch = dev == Device::CUDA ? 4.0 * std::min(n, 4096.0) * n : act(c, h, w);
      live(stage_in + 7 * act(c, h, w) + scratch, stage);
    }
    resnet(stage_in, c, c, h, w, stage);
  }
};

}  // namespace

MemoryEstimate encode_memory(const Config& c, int64_t width, int64_t height, Device d) {
  Walk k(d);
  const auto& widths = c.block_out_channels;
  int64_t h = height, w = width;
  const double input = act(c.in_channels, h, w);
  // on the CPU the tool holds the 8-bit picture and its F32 input for the whole run
  const double host = d == Device::CPU ? 3.0 * double(h) * double(w) + input : 0.0;
  k.live(input + act(widths[0], h, w), "enc.conv_in");
  int64_t ch = widths[0];
  for (size_t i = 0; i < widths.size(); ++i) {
    const std::string stage = "enc.down." + std::to_string(i);
    const double stage_in = act(ch, h, w);
    for (int64_t j = 0; j < c.layers_per_block; ++j) {
      k.resnet(stage_in, ch, widths[i], h, w, stage);
      ch = widths[i];
    }
    if (i + 1 < widths.size()) {  // downsample: its input and its half-size output
      k.live(stage_in + act(ch, h, w) + act(ch, (h + 1) / 2, (w + 1) / 2), stage);
      h = (h + 1) / 2;
      w = (w + 1) / 2;
    }
  }
  k.mid(act(ch, h, w), ch, h, w, c.mid_block_add_attention, "enc.mid");
  k.live(2 * act(ch, h, w) + 2 * act(2 * c.latent_channels, h, w), "enc.moments");
  return {kAllocatorSlack * (host + k.peak().bytes) + kWorkspaceBytes, k.peak().peak};
}

MemoryEstimate decode_memory(const Config& c, int64_t width, int64_t height, Device d) {
  Walk k(d);
  const auto& dw = c.decoder_widths();
  const size_t stages = dw.size();
  const int64_t s = c.downscale();
  int64_t h = std::max<int64_t>(1, height / s), w = std::max<int64_t>(1, width / s);
  const double latents = act(c.latent_channels, h, w);
  int64_t ch = dw.back();
  k.live(3 * latents + act(ch, h, w), "dec.conv_in");
  k.mid(act(ch, h, w), ch, h, w, c.mid_block_add_attention, "dec.mid");
  for (size_t i = 0; i < stages; ++i) {
    const std::string stage = "dec.up." + std::to_string(i);
    const int64_t out = dw[stages - 1 - i];
    const double stage_in = act(ch, h, w);
    for (int64_t j = 0; j < c.layers_per_block + 1; ++j) {
      k.resnet(stage_in, ch, out, h, w, stage);
      ch = out;
    }
    if (i + 1 < stages) {  // upsample: its input, the nearest 2x copy and the conv's output
      k.live(stage_in + act(ch, h, w) + 2 * act(ch, 2 * h, 2 * w), stage);
      h *= 2;
      w *= 2;
    }
  }
  k.live(2 * act(ch, h, w) + act(c.out_channels, h, w), "dec.out");
  // on the CPU the decoded F32 picture and its 8-bit copy live together at the end
  const double host = d == Device::CPU ? latents + act(c.out_channels, h, w) + 3.0 * double(h) * double(w) : 0.0;
  return {kAllocatorSlack * (std::max(k.peak().bytes, host) + latents) + kWorkspaceBytes, k.peak().peak};
}

void require_memory_for(Direction dir, const Config& c, int64_t width, int64_t height, Device d,
                        const AvailableMemory& have, const std::string& what) {
  auto estimate = [&](int64_t wi, int64_t he) {
    return dir == Direction::Encode ? encode_memory(c, wi, he, d) : decode_memory(c, wi, he, d);
  };
  const MemoryEstimate need = estimate(width, height);
  if (need.bytes <= double(have.bytes)) return;
  // the largest picture of the same shape (sides multiples of the picture multiple) that fits
  const int64_t m = c.picture_multiple();
  double scale = std::sqrt(double(have.bytes) / need.bytes);
  int64_t fit_w = 0, fit_h = 0;
  for (int tries = 0; tries < 64 && scale > 0; ++tries, scale *= 0.95) {
    const int64_t wi = int64_t(double(width) * scale) / m * m, he = int64_t(double(height) * scale) / m * m;
    if (wi < m || he < m) break;
    if (estimate(wi, he).bytes <= double(have.bytes)) {
      fit_w = wi;
      fit_h = he;
      break;
    }
  }
  const std::string run = std::string(dir == Direction::Encode ? "encoding" : "decoding") + " a " +
                          std::to_string(width) + "x" + std::to_string(height) + " picture";
  require_memory(need, have, what, run,
                 "use a smaller picture" +
                     (fit_w > 0 ? " (" + std::to_string(fit_w) + "x" + std::to_string(fit_h) + " fits)" : std::string()));
}

}  // namespace tf::flux2_vae
