#pragma once
// The MOSS-Image prompt encoder's forward (Qwen3.5's text model, one causal prefill, no cache):
// ids -> embedding -> layers (Gated DeltaNet or gated full attention, then the MLP) -> final norm.
// It runs on one Device, allocating with tf::empty and calling only backend ops, so it runs
// wherever the backend has kernels. Several sequences can be packed along the token axis and go
// through the weights once.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/device/recorded_work.h"
#include "backend/device/seq_offsets.h"
#include "backend/norm/rms_norm.h"
#include "core/tensor.h"
#include "families/common/caches.h"
#include "families/common/progress.h"
#include "families/common/steps.h"
#include "families/moss_image/encoder/config.h"
#include "families/moss_image/encoder/weights.h"

namespace tf::moss_image {

class Encoder {
 public:
  Encoder(EncoderConfig config, EncoderWeights weights, Device device);

  // `dir`: the text encoder folder (config.json + shards).
  static Encoder load(const std::string& dir, const LoadOptions& options);

  const EncoderConfig& config() const { return config_; }
  const EncoderWeights& weights() const { return weights_; }
  Device device() const { return device_; }

  // Steps the reference gate checks one by one: layers 0 .. L-1, then the final norm (step L).
  int64_t steps() const { return config_.layers + 1; }
  std::string step_name(int64_t step) const;
  // The steps as the gate runs them, on sequences packed as `seq_offsets` (each run_step).
  std::vector<Step> stepwise(const SeqOffsets& seq_offsets) const;

  // ids: the packed sequences' token ids [T] (host); returns the final norm's rows, BF16
  // [T, hidden] on `out_device` (the CPU, or the encoder's own device: the rows stay there). Sequences run in packs of at most kLinearPackedRows rows (a longer one
  // alone), so each sequence's rows are the bytes it gets when encoded alone. On CUDA a pack layout
  // seen a second time is recorded as one CUDA graph (layers and final norm) and replayed from then
  // on, with the same bytes; progress is then reported once, at the end.
  Tensor forward(const std::vector<int32_t>& ids, const SeqOffsets& seq_offsets, const Progress& progress = {},
                 Device out_device = Device::CPU) const;

  // One step alone on given rows (BF16 [T, hidden], any device): a layer (step < layers) or the
  // final norm (step == layers). Returns BF16 [T, hidden] on the CPU.
  Tensor run_step(int64_t step, const Tensor& rows, const SeqOffsets& seq_offsets) const;

 private:
  struct Rope {
    Tensor cos, sin;  // BF16 [positions, rotary_dim / 2] on the device
  };
  // One pack layout's recorded forward: its ids (uploaded before each replay), rows h (the
  // embedding, recorded first), its RoPE tables and output rows, all kept for the graph's kernels.
  struct RecordedForward {
    Tensor ids, h, out;
    Rope rope;
    RecordedWork work;
  };
  static constexpr size_t kMaxRecordedLayouts = 16;

  Tensor forward_pack(const std::vector<int32_t>& ids, const SeqOffsets& seq_offsets, const Progress& progress,
                      Device out_device) const;
  // The recorded path of forward_pack: an empty tensor when this layout is not (yet) recorded.
  Tensor forward_recorded(const Tensor& host_ids, const SeqOffsets& seq_offsets, Device out_device) const;
  Rope rope_for(const SeqOffsets& seq_offsets) const;
  // A sublayer's last product, left for the residual add to take (linear's residual epilogue).
  struct Projection {
    Tensor x;
    const Tensor* w;
  };
  // Qwen3.5's norms: zero-centred weights (one_plus).
  RmsNormOptions norm() const { return {NormWeight::one_plus, static_cast<float>(config_.rms_norm_eps)}; }
  // Layer i on h (in place) from x, h's input norm; x is then overwritten. The MLP's residual add
  // is fused with next_norm when given: x = next_norm(h), the next layer's input (or the final
  // rows), the same bytes as the add and the norm apart (run_step's path).
  void layer(int64_t i, Tensor& h, Tensor& x, const SeqOffsets& seq_offsets, const Rope& rope,
             const Tensor* next_norm) const;
  // Every layer on h; x ends as the final norm's rows.
  void layers(Tensor& h, Tensor& x, const SeqOffsets& seq_offsets, const Rope& rope, const Progress& progress) const;
  Projection delta_net(const DeltaNetWeights& w, const Tensor& x, const SeqOffsets& seq_offsets) const;
  Projection attention(const AttentionWeights& w, const Tensor& x, const SeqOffsets& seq_offsets, const Rope& rope) const;
  Projection mlp(const LayerWeights& w, const Tensor& x) const;
  Tensor final_norm(const Tensor& h) const;

  EncoderConfig config_;
  EncoderWeights weights_;
  Device device_;
  std::shared_ptr<RecordedCache<SeqOffsets, RecordedForward>> recorded_ =
      std::make_shared<RecordedCache<SeqOffsets, RecordedForward>>(kMaxRecordedLayouts);
  // The RoPE tables of the longest sequence so far, on the device: a shorter one takes their first rows.
  std::shared_ptr<PrefixTableCache<Rope>> rope_cache_ = std::make_shared<PrefixTableCache<Rope>>();
};

}  // namespace tf::moss_image
