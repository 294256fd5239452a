#include "families/moss_image/sampler/sample.h"

#include <cmath>

#include "backend/device/recorded_work.h"
#include "backend/elementwise/guided_euler_step.h"
#include "backend/elementwise/transpose_to_bf16.h"
#include "backend/variants.h"
#include "core/error.h"
#include "families/moss_image/sampler/update.h"

namespace tf::moss_image {

namespace {

// TF_SAMPLER_LOOP=host: each step's velocities to the CPU, guidance and the Euler step there (update.h).
Tensor sample_on_host(const Transformer& tr, const SamplingRun& run, const Progress& progress,
                      const SampleCallback& on_step) {
  Tensor x = empty(DType::F32, run.noise.shape);
  copy_into(x, run.noise);
  const int64_t n = static_cast<int64_t>(run.sigmas.size()) - 1;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<TransformerSample> s{{x, run.rows, {}}};
    if (run.negative_rows.defined()) s.push_back({x, run.negative_rows, run.negative_skip_layers});
    const std::vector<Tensor> v = tr.velocity(s, run.sigmas[i]);
    euler_step(x, s.size() > 1 ? guided(v[0], v[1], run.guidance) : v[0], run.sigmas[i], run.sigmas[i + 1]);
    report(progress, "step " + std::to_string(i + 1), i + 1, n);
    if (on_step) on_step(i, n, x);
  }
  return x;
}

}  // namespace

Tensor sample(const Transformer& tr, const SamplingRun& run, const Progress& progress, const SampleCallback& on_step) {
  const Device dev = tr.device();
  const auto& c = tr.config();
  const bool cfg = run.negative_rows.defined();
  require(run.noise.dtype == DType::F32 && run.noise.rank() == 3 && run.noise.dim(0) == c.latent_channels,
          "sample: noise is " + run.noise.describe() + ", expected F32 [" + std::to_string(c.latent_channels) + ", h, w]");
  require(run.sigmas.size() >= 2 && run.sigmas.back() == 0.0f,
          "sample: expected a schedule of at least two sigmas ending in 0");
  require(std::isfinite(run.guidance), "sample: the guidance scale is not finite");
  if (variant_is<Variant::sampler_loop>("host")) return sample_on_host(tr, run, progress, on_step);
  const int64_t C = c.latent_channels, hw = run.noise.dim(1) * run.noise.dim(2), S = cfg ? 2 : 1;
  Tensor x = empty(DType::F32, run.noise.shape, dev);
  copy_into(x, run.noise);
  Tensor xm = x.reshaped({C, hw});
  // Both branches' rows, packed once.
  const int64_t L = run.rows.dim(0), Ln = cfg ? run.negative_rows.dim(0) : 0;
  Tensor rows_host = empty(DType::BF16, {L + Ln, c.text_dim});
  Tensor top = rows_host.rows(0, L);
  copy_into(top, run.rows);
  if (cfg) {
    Tensor bottom = rows_host.rows(L, L + Ln);
    copy_into(bottom, run.negative_rows);
  }
  const Tensor rows = to_device(rows_host, dev);
  std::vector<TransformerSample> layout{{run.noise, run.rows, {}}};
  if (cfg) layout.push_back({run.noise, run.negative_rows, run.negative_skip_layers});
  Tensor tokens = empty(DType::BF16, {S * hw, C}, dev), out = empty(DType::BF16, {S * hw, C}, dev);
  Tensor sigma = empty(DType::F32, {1}, dev), scalars = empty(DType::F32, {3}, dev);
  Tensor h_sigma = empty(DType::F32, {1}), h_scalars = empty(DType::F32, {3});
  Transformer::PassTables tables;
  const auto step = [&] {
    for (int64_t k = 0; k < S; ++k) {
      Tensor t = tokens.rows(k * hw, (k + 1) * hw);
      transpose_to_bf16(xm, t);
    }
    tables = tr.pass_on_device(layout, sigma, tokens, rows, out);
    const Tensor uncond = cfg ? out.rows(hw, 2 * hw) : Tensor{};
    guided_euler_step(xm, out.rows(0, hw), cfg ? &uncond : nullptr, scalars);
  };
  RecordedWork recorded;
  Transformer::PassTables recorded_tables;  // what the graph reads, alive as long as it
  const int64_t n = static_cast<int64_t>(run.sigmas.size()) - 1;
  for (int64_t i = 0; i < n; ++i) {
    h_sigma.ptr<float>()[0] = run.sigmas[i];
    float* s = h_scalars.ptr<float>();
    s[0] = static_cast<float>(run.guidance);  // torch rounds the Python float to fp32
    s[1] = run.sigmas[i];
    s[2] = run.sigmas[i + 1];
    copy_into(sigma, h_sigma);  // a host copy waits for the previous step on the device
    copy_into(scalars, h_scalars);
    if (i == 0 || !recording_supported(dev)) {
      step();  // the first step eagerly: every kernel's one-time set-up happens outside the recording
    } else {
      if (!recorded || !recorded.under_current_variants()) {
        recorded = RecordedWork::record(dev, step);
        recorded_tables = tables;
      }
      recorded.replay();
    }
    report(progress, "step " + std::to_string(i + 1), i + 1, n);
    if (on_step) on_step(i, n, to_device(x, Device::CPU));
  }
  return to_device(x, Device::CPU);
}

}  // namespace tf::moss_image
