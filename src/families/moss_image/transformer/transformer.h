#pragma once
// MOSS-Image's diffusion transformer forward (docs/perf/transformer/references.md, "The forward"):
// sigma -> timestep sinusoid -> time MLP -> one shared modulation of every block and the head's;
// latents -> image tokens (a linear a latent pixel); prompt rows -> text tokens -> two text blocks;
// [image ; text] through the joint blocks (bidirectional attention, 4-axis RoPE, SiTU-GLU, gated
// residuals); the head over the image rows -> velocity. bf16 activations rounded where the
// reference's bf16 tensors round, every sum in fp32. Several samples (a guidance step's cond and
// uncond branch) pack into one pass, each with its own bytes.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/device/recorded_work.h"
#include "backend/device/seq_offsets.h"
#include "backend/rope/rope_tables.h"
#include "core/tensor.h"
#include "families/common/caches.h"
#include "families/common/load_options.h"
#include "families/common/progress.h"
#include "families/moss_image/transformer/load.h"

namespace tf::moss_image {

// One sample of a pass: its latents, prompt rows and the blocks it skips (the negative branch skips one).
struct TransformerSample {
  Tensor latents;                    // F32 [latent_channels, h, w] (CPU)
  Tensor rows;                       // BF16 [L, text_dim] (CPU), the prompt encoder's rows
  std::vector<int64_t> skip_layers;  // joint blocks this sample passes unchanged
};

class Transformer {
 public:
  explicit Transformer(LoadedTransformer loaded, Device device);
  // `path`: a pipeline folder, the transformer folder or a single-file export (load.h).
  static Transformer load(const std::string& path, const LoadOptions& options);

  const TransformerConfig& config() const { return c_; }
  const TransformerWeights& weights() const { return w_; }
  Device device() const { return device_; }

  // Every sample's velocity, F32 [latent_channels, h, w] on the CPU; the samples share sigma (a
  // guidance step's branches) and run packed into one pass; each gets the bytes it gets alone.
  std::vector<Tensor> velocity(const std::vector<TransformerSample>& samples, float sigma,
                               const Progress& progress = {}) const;

  // The tables a pass reads (RoPE of the text and the joint sequences): a caller recording the pass
  // keeps them as long as its recording.
  struct PassTables {
    RopeTables text, joint;
  };
  // The packed pass on tensors already on the device, queued and not waited for (a sampler that keeps
  // its latents there): sigma F32 [1]; tokens BF16 [sum h*w, C], each sample's latent pixels in
  // row-major order; rows BF16 [sum L, text_dim]; out BF16 [sum h*w, C], the head's rows. `layout`
  // gives each sample's h, w (its latents' shape), L (its rows') and skipped blocks; their data is not read.
  PassTables pass_on_device(const std::vector<TransformerSample>& layout, const Tensor& sigma, const Tensor& tokens,
                            const Tensor& rows, Tensor& out) const;

  // The steps the reference gate checks one at a time (bf16 in, bf16 out, on the CPU):
  // the modulation rows [8, dim]: the shared block modulation's six chunks (shift_a, scale_a, gate_a,
  // shift_f, scale_f, gate_f), then the head's shift and scale.
  Tensor time_rows(float sigma) const;
  Tensor video_embed(const Tensor& latents) const;  // F32 [C, h, w] -> [h*w, dim]
  Tensor text_embed(const Tensor& rows) const;      // BF16 [L, text_dim] -> [L, dim]
  Tensor text_block(int64_t i, const Tensor& x) const;  // [L, dim] -> [L, dim]
  // Joint block i on one sample's [h*w + L, dim] with its latents' h, w and text length L.
  Tensor joint_block(int64_t i, const Tensor& x, const Tensor& time, int64_t h, int64_t w) const;
  Tensor head(const Tensor& x, const Tensor& time, int64_t h, int64_t w) const;  // -> F32 [C, h, w]

 private:
  void check_sample(const TransformerSample& s, size_t k) const;
  // The modulation rows [8, dim] on the device from sigma F32 [1] there.
  Tensor time_rows_from(const Tensor& sigma) const;
  // The packed pass on the device: sigma F32 [1]; tokens BF16 [sum h*w, C], each sample's latent
  // pixels in row-major order; rows BF16 [sum L, text_dim]; out BF16 [sum h*w, C], the head's rows.
  void pass(const std::vector<TransformerSample>& samples, const Tensor& sigma, const Tensor& tokens, const Tensor& rows,
            const RopeTables& text_rope, const RopeTables& joint_rope, Tensor& out, const Progress& progress) const;
  Tensor text_block_on(int64_t i, const Tensor& x, const RopeTables& rope, const SeqOffsets& seqs) const;
  void joint_block_on(int64_t i, Tensor& x, const Tensor& time, const RopeTables& rope, const SeqOffsets& seqs) const;
  Tensor head_on(const Tensor& x_image, const Tensor& time) const;
  Tensor velocity_of(const Tensor& head_rows, int64_t h, int64_t w) const;
  // Attention with its q / k norms and RoPE on a q|k|v product [T, 3 * dim]; returns o [T, dim] before the
  // output product.
  Tensor attention(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, const RopeTables& rope,
                   const SeqOffsets& seqs) const;

  // RoPE tables on the device for a pack layout (each sample's h, w, L; h = w = 0 for text alone).
  RopeTables rope_for(const std::vector<int64_t>& layout) const;

  TransformerConfig c_;
  TransformerWeights w_;
  Device device_;
  std::shared_ptr<LayoutCache<std::vector<int64_t>, RopeTables>> rope_cache_ =
      std::make_shared<LayoutCache<std::vector<int64_t>, RopeTables>>(16);
  // A pass recorded per layout (each sample's h, w, L and skipped blocks): its inputs and output on
  // the device, the tables it reads, the work (on CUDA a graph).
  struct RecordedPass {
    Tensor sigma, tokens, rows, out;
    RopeTables text_rope, joint_rope;
    RecordedWork work;
  };
  static constexpr size_t kMaxRecordedLayouts = 8;
  std::shared_ptr<RecordedCache<std::vector<int64_t>, RecordedPass>> recorded_ =
      std::make_shared<RecordedCache<std::vector<int64_t>, RecordedPass>>(kMaxRecordedLayouts);
};

// Positions (r, t, h, w) of one sample's tokens, F32 [h*w + L, 4]: image token (y, x) at
// (0, L, y - (h-1)/2, x - (w-1)/2), text token i at (0, i, 0, 0).
Tensor joint_positions(int64_t h, int64_t w, int64_t L);

// Latents F32 [C, h, w] -> BF16 tokens [h*w, C] on the CPU, token n = y*w + x (the reference's flatten and cast).
Tensor latent_tokens(const Tensor& latents);

}  // namespace tf::moss_image
