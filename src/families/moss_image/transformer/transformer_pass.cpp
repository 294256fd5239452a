// The packed pass of several samples (a guidance step's branches): staged on the host, run on the
// device eagerly, or (a layout's second sight on CUDA) recorded once as one graph and replayed for
// every step, sigma read from device memory.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/linear/linear.h"
#include "core/error.h"
#include "families/moss_image/transformer/transformer.h"

namespace tf::moss_image {

namespace {

Tensor host(const Tensor& t) { return to_device(t, Device::CPU); }

// The recording key: each sample's h, w, L, its skipped blocks' count and the blocks.
std::vector<int64_t> layout_key(const std::vector<TransformerSample>& samples) {
  std::vector<int64_t> key;
  for (const TransformerSample& s : samples) {
    key.insert(key.end(), {s.latents.dim(1), s.latents.dim(2), s.rows.dim(0), int64_t(s.skip_layers.size())});
    key.insert(key.end(), s.skip_layers.begin(), s.skip_layers.end());
  }
  return key;
}

}  // namespace

void Transformer::pass(const std::vector<TransformerSample>& samples, const Tensor& sigma, const Tensor& tokens,
                       const Tensor& rows, const RopeTables& text_rope, const RopeTables& joint_rope, Tensor& out,
                       const Progress& progress) const {
  const int64_t S = static_cast<int64_t>(samples.size()), total = c_.text_blocks + c_.layers + 1;
  SeqOffsets text_seqs{0}, joint_seqs{0}, image_rows{0};
  for (const TransformerSample& s : samples) {
    const int64_t L = s.rows.dim(0), hw = s.latents.dim(1) * s.latents.dim(2);
    text_seqs.push_back(text_seqs.back() + L);
    joint_seqs.push_back(joint_seqs.back() + hw + L);
    image_rows.push_back(image_rows.back() + hw);
  }
  const Tensor time = time_rows_from(sigma);
  Tensor text = empty(DType::BF16, {text_seqs.back(), c_.dim}, device_);
  linear(rows, w_.text_embedder.proj.w, text, {.bias = &w_.text_embedder.proj.b});
  for (int64_t i = 0; i < c_.text_blocks; ++i) {
    text = text_block_on(i, text, text_rope, text_seqs);  // attention within each sample's text
    report(progress, "text block " + std::to_string(i), i + 1, total);
  }
  // The joint sequence of every sample: [image_k ; text_k], samples one after another.
  Tensor x = empty(DType::BF16, {joint_seqs.back(), c_.dim}, device_);
  for (int64_t k = 0; k < S; ++k) {
    const int64_t hw = image_rows[k + 1] - image_rows[k];
    Tensor img = x.rows(joint_seqs[k], joint_seqs[k] + hw), txt = x.rows(joint_seqs[k] + hw, joint_seqs[k + 1]);
    linear(tokens.rows(image_rows[k], image_rows[k + 1]), w_.video_embedder.w, img, {.bias = &w_.video_embedder.b});
    copy_into(txt, text.rows(text_seqs[k], text_seqs[k + 1]));
  }
  for (int64_t i = 0; i < c_.layers; ++i) {
    // Block i runs on each run of consecutive samples that do not skip it, their rows a view of x.
    auto skips = [&](int64_t k) {
      return std::count(samples[k].skip_layers.begin(), samples[k].skip_layers.end(), i) > 0;
    };
    for (int64_t k = 0; k < S;) {
      if (skips(k)) {
        ++k;
        continue;
      }
      int64_t k1 = k + 1;
      while (k1 < S && !skips(k1)) ++k1;
      const int64_t a = joint_seqs[k], b = joint_seqs[k1];
      SeqOffsets seqs;
      for (int64_t j = k; j <= k1; ++j) seqs.push_back(joint_seqs[j] - a);
      Tensor xs = x.rows(a, b);
      joint_block_on(i, xs, time, {joint_rope.cos.rows(a, b), joint_rope.sin.rows(a, b)}, seqs);
      k = k1;
    }
    report(progress, "block " + std::to_string(i), c_.text_blocks + i + 1, total);
  }
  for (int64_t k = 0; k < S; ++k) {
    Tensor dst = out.rows(image_rows[k], image_rows[k + 1]);
    copy_into(dst, head_on(x.rows(joint_seqs[k], joint_seqs[k] + image_rows[k + 1] - image_rows[k]), time));
  }
  report(progress, "head", total, total);
}

Transformer::PassTables Transformer::pass_on_device(const std::vector<TransformerSample>& layout, const Tensor& sigma,
                                                   const Tensor& tokens, const Tensor& rows, Tensor& out) const {
  require(!layout.empty(), "transformer: no sample to run");
  int64_t N = 0, L = 0;
  std::vector<int64_t> text_layout, joint_layout;
  for (size_t k = 0; k < layout.size(); ++k) {
    const TransformerSample& s = layout[k];
    check_sample(s, k);
    N += s.latents.dim(1) * s.latents.dim(2), L += s.rows.dim(0);
    text_layout.insert(text_layout.end(), {0, 0, s.rows.dim(0)});
    joint_layout.insert(joint_layout.end(), {s.latents.dim(1), s.latents.dim(2), s.rows.dim(0)});
  }
  const char* what = "transformer pass on the device";
  require(sigma.device == device_ && sigma.dtype == DType::F32 && sigma.shape == Shape{1},
          std::string(what) + ": sigma is " + sigma.describe() + ", expected F32 [1] on its device");
  for (auto [name, t, n, width] : {std::tuple<const char*, const Tensor*, int64_t, int64_t>{"tokens", &tokens, N, c_.latent_channels},
                                   {"rows", &rows, L, c_.text_dim}, {"out", &out, N, c_.latent_channels}})
    require(t->device == device_ && t->dtype == DType::BF16 && t->shape == Shape{n, width},
            std::string(what) + ": " + name + " is " + t->describe() + ", expected BF16 [" + std::to_string(n) + ", " +
                std::to_string(width) + "] on its device");
  PassTables tables{rope_for(text_layout), rope_for(joint_layout)};
  pass(layout, sigma, tokens, rows, tables.text, tables.joint, out, Progress());
  return tables;
}

std::vector<Tensor> Transformer::velocity(const std::vector<TransformerSample>& samples, float sigma,
                                          const Progress& progress) const {
  require(!samples.empty(), "transformer: no sample to run");
  require(std::isfinite(sigma), "transformer: sigma " + std::to_string(sigma) + " is not finite");
  for (size_t k = 0; k < samples.size(); ++k) check_sample(samples[k], k);
  // The inputs staged on the host: sigma, every sample's latent pixels, then prompt rows, packed.
  int64_t N = 0, L = 0;
  for (const TransformerSample& s : samples) N += s.latents.dim(1) * s.latents.dim(2), L += s.rows.dim(0);
  Tensor h_sigma = empty(DType::F32, {1}), h_tokens = empty(DType::BF16, {N, c_.latent_channels}),
         h_rows = empty(DType::BF16, {L, c_.text_dim});
  h_sigma.ptr<float>()[0] = sigma;
  std::vector<int64_t> text_layout, joint_layout;
  for (int64_t k = 0, n = 0, l = 0; k < static_cast<int64_t>(samples.size()); ++k) {
    const TransformerSample& s = samples[k];
    const int64_t hw = s.latents.dim(1) * s.latents.dim(2), Lk = s.rows.dim(0);
    Tensor t = h_tokens.rows(n, n + hw), r = h_rows.rows(l, l + Lk);
    copy_into(t, latent_tokens(host(s.latents)));
    copy_into(r, s.rows);
    n += hw, l += Lk;
    text_layout.insert(text_layout.end(), {0, 0, Lk});
    joint_layout.insert(joint_layout.end(), {s.latents.dim(1), s.latents.dim(2), Lk});
  }
  Tensor out_host;
  const auto record = [&](RecordedPass& r) {
    r.sigma = empty(DType::F32, {1}, device_);
    r.tokens = empty(DType::BF16, h_tokens.shape, device_);
    r.rows = empty(DType::BF16, h_rows.shape, device_);
    r.out = empty(DType::BF16, h_tokens.shape, device_);
    r.text_rope = rope_for(text_layout);  // made (uploaded) before the recording, held by the entry
    r.joint_rope = rope_for(joint_layout);
    r.work = RecordedWork::record(device_, [&] {
      pass(samples, r.sigma, r.tokens, r.rows, r.text_rope, r.joint_rope, r.out, Progress());
    });
  };
  const auto stale = [](const RecordedPass& r) { return !r.work.under_current_variants(); };
  const bool replayed = recording_supported(device_) &&
                        recorded_->replay(layout_key(samples), record, stale, [&](RecordedPass& r) {
                          copy_into(r.sigma, h_sigma);  // the previous replay has ended: its output was copied back
                          copy_into(r.tokens, h_tokens);
                          copy_into(r.rows, h_rows);
                          r.work.replay();
                          out_host = host(r.out);
                        });
  if (replayed) {
    report(progress, "head", c_.text_blocks + c_.layers + 1, c_.text_blocks + c_.layers + 1);
  } else {
    Tensor out = empty(DType::BF16, h_tokens.shape, device_);
    pass(samples, to_device(h_sigma, device_), to_device(h_tokens, device_), to_device(h_rows, device_),
         rope_for(text_layout), rope_for(joint_layout), out, progress);
    out_host = host(out);
  }
  std::vector<Tensor> velocities;
  for (int64_t k = 0, n = 0; k < static_cast<int64_t>(samples.size()); ++k) {
    const int64_t h = samples[k].latents.dim(1), w = samples[k].latents.dim(2);
    velocities.push_back(velocity_of(out_host.rows(n, n + h * w), h, w));
    n += h * w;
  }
  return velocities;
}

}  // namespace tf::moss_image
