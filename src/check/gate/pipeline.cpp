#include "check/gate/pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "check/compare.h"
#include "check/gate/case.h"
#include "check/gate/convert.h"
#include "check/gate/gate.h"
#include "core/error.h"

namespace tf::check::gate {

namespace {

struct CaseRun {
  std::string prefix;  // "r<k>."
  pipelines::GenerateRequest request;
  bool gated = false;
};

std::string run_prefix(size_t k) {
  std::string p = "r";
  p += std::to_string(k);
  p += '.';
  return p;
}

std::vector<CaseRun> case_runs(const Case& c) {
  const Json list = c.meta_json("runs");
  if (!list.is_array() || list.empty()) fail(c.path() + ": metadata \"runs\" must be a non-empty JSON array");
  std::vector<CaseRun> runs;
  for (size_t k = 0; k < list.size(); ++k) {
    const Json& j = list[k];
    const std::string where = c.path() + ": metadata \"runs\" entry " + std::to_string(k);
    if (!j.is_object()) fail(where + " must be an object");
    CaseRun r;
    r.prefix = run_prefix(k);
    auto& q = r.request;
    try {
      q.prompt = j.at("prompt").get<std::string>();
      q.negative = j.at("negative").get<std::string>();
      q.seed = j.at("seed").get<uint64_t>();
      q.width = j.at("width").get<int64_t>();
      q.height = j.at("height").get<int64_t>();
      q.steps = j.at("steps").get<int64_t>();
      q.guidance = j.at("guidance").get<double>();
      q.shift = j.at("shift").get<double>();
      q.negative_skip_layers = j.at("skip_layers").get<std::vector<int64_t>>();
    } catch (const Json::exception& e) {
      fail(where + ": " + e.what() + " (expected prompt, negative, seed, width, height, steps, guidance, shift, skip_layers)");
    }
    runs.push_back(std::move(r));
  }
  if (c.has_meta("gated_runs")) {
    const Json g = c.meta_json("gated_runs");
    if (!g.is_array()) fail(c.path() + ": metadata \"gated_runs\" must be a JSON array of run indices");
    for (const Json& i : g) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() >= int64_t(runs.size()))
        fail(c.path() + ": metadata \"gated_runs\" holds " + i.dump() + ", expected a run index 0 .. " +
             std::to_string(runs.size() - 1));
      runs[i.get<size_t>()].gated = true;
    }
  }
  return runs;
}

double psnr(const RgbImage& got, const Tensor& ref) {
  const uint8_t* r = ref.ptr<const uint8_t>();
  double sum = 0;
  for (size_t i = 0; i < got.rgb.size(); ++i) {
    const double d = double(got.rgb[i]) - double(r[i]);
    sum += d * d;
  }
  if (sum == 0) return std::numeric_limits<double>::infinity();
  return 10 * std::log10(255.0 * 255.0 / (sum / double(got.rgb.size())));
}

double psnr(const Tensor& got, const Tensor& ref) {
  RgbImage g;
  g.rgb.assign(got.ptr<const uint8_t>(), got.ptr<const uint8_t>() + got.numel());
  return psnr(g, ref);
}

std::string sci(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2e", v);
  return b;
}

// ||got - ref|| / ||ref|| over BF16 rows (got on any device), as the case tool's distance()[1]; rows
// of another count (another tokenization) are named instead.
std::string frobenius(const Tensor& got, const Tensor& ref) {
  if (!got.defined()) return "none";
  if (got.shape != ref.shape) return shape_str(got.shape) + " rows against the case's " + shape_str(ref.shape);
  const Tensor a = to_f32(to_device(got, Device::CPU)), b = to_f32(ref);
  double d = 0, n = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.ptr<const float>()[i], y = b.ptr<const float>()[i];
    d += (x - y) * (x - y);
    n += y * y;
  }
  return sci(n > 0 ? std::sqrt(d / n) : std::sqrt(d));
}

std::string db(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

}  // namespace

GateReport run_pipeline_gate(const pipelines::MossImagePipeline& pipe, const PipelineGateOptions& opt, std::ostream& out) {
  const Case c = Case::open(opt.case_path, kPipelineComponent);
  const std::vector<CaseRun> runs = case_runs(c);
  const moss_image::TransformerConfig& cfg = pipe.folder().transformer_config;
  const int64_t C = cfg.latent_channels, m = pipe.folder().vae_config.picture_multiple();
  // The default row plant: run 0's middle step, cond branch.
  const std::string middle = c.steps().empty() ? std::string() : c.steps()[c.steps().size() / 4 * 2];
  GateRun run(c, opt.plant, middle, out);
  double noise_worst = 0;
  bool schedule_same = true;
  std::vector<double> ours_db, torch_db;
  size_t stepped = 0;
  for (const CaseRun& r : runs) {
    const std::string& p = r.prefix;
    const auto& q = r.request;
    const int64_t h = q.height / m, w = q.width / m;
    const std::string why = "run " + p.substr(0, p.size() - 1) + "'s " + std::to_string(q.width) + "x" +
                            std::to_string(q.height) + " picture";
    // Each gated step: both branches packed on the float32 run's input.
    if (r.gated) {
      const Tensor rows = c.input(p + "prompt.rows", {{DType::BF16}, {-1, cfg.text_dim}, "", why});
      const Tensor negative = c.input(p + "negative.rows", {{DType::BF16}, {-1, cfg.text_dim}, "", why});
      for (int64_t i = 0;; ++i) {
        const std::string s = p + "s" + std::to_string(i);
        if (!c.has_step(s + ".cond")) break;
        const Tensor x = c.input(s + ".latents", {{DType::F32}, {C, h, w}, "", why});
        const float sigma = c.input(s + ".sigma", {{DType::F32}, {1}, "", why}).ptr<const float>()[0];
        const std::vector<Tensor> v =
            pipe.transformer().velocity({{x, rows, {}}, {x, negative, q.negative_skip_layers}}, sigma);
        run.step(s + ".cond", v[0], Rows::Positions, why);
        run.step(s + ".uncond", v[1], Rows::Positions, why);
        stepped += 2;
      }
    }
    // The whole picture from the prompts.
    pipelines::Generated g = pipe.generate(q);
    Tensor sigmas = c.whole(p + "sigmas", {{DType::F32}, {-1}, "[n + 1]", why});
    if (opt.plant.is_extra("schedule") && p == "r0.") g.sigmas[g.sigmas.size() / 2] *= 1.0f + 1e-6f;
    schedule_same = schedule_same && sigmas.numel() == int64_t(g.sigmas.size()) &&
                    std::equal(g.sigmas.begin(), g.sigmas.end(), sigmas.ptr<const float>());
    const Tensor noise = c.whole(p + "noise", {{DType::F32}, {C, h, w}, "", why});
    if (opt.plant.is_extra("noise") && p == "r0.") g.noise.ptr<float>()[0] += 1e-5f;
    for (int64_t i = 0; i < noise.numel(); ++i)
      noise_worst = std::max(noise_worst, double(std::fabs(g.noise.ptr<const float>()[i] - noise.ptr<const float>()[i])));
    const Expected picture{{DType::U8}, {q.height, q.width, 3}, "[H, W, 3]", why};
    const Tensor f32 = c.whole(p + "picture.f32", picture), bf16 = c.whole(p + "picture.bf16", picture);
    if (p == "r0.") {
      pipelines::Generated again = pipe.generate(q);
      if (run.plant().kind == Plant::Kind::Repeat) again.picture.rgb[again.picture.rgb.size() / 2] ^= 1;
      run.repeat(again.picture.rgb == g.picture.rgb);
    }
    if (opt.plant.is_extra("picture"))
      for (size_t i = 0; i < g.picture.rgb.size(); i += 7) g.picture.rgb[i] = uint8_t(255 - g.picture.rgb[i]);
    ours_db.push_back(psnr(g.picture, f32));
    torch_db.push_back(psnr(bf16, f32));
    out << "  " << p.substr(0, p.size() - 1) << " picture PSNR from float32: ours " << db(ours_db.back())
        << " dB, torch bf16 " << db(torch_db.back()) << " dB\n";
    if (c.has("in." + p + "prompt.rows")) {  // informative: the encoder's share and the rest's, apart
      pipelines::GenerateRequest on_rows = q;
      on_rows.prompt_rows = c.input(p + "prompt.rows", {{DType::BF16}, {-1, cfg.text_dim}, "", why});
      on_rows.negative_rows = c.input(p + "negative.rows", {{DType::BF16}, {-1, cfg.text_dim}, "", why});
      out << "    our encoder's rows from bf16(float32 rows): prompt " << frobenius(g.prompt_rows, on_rows.prompt_rows)
          << ", negative " << frobenius(g.negative_rows, on_rows.negative_rows);
      if (c.has_meta("rows_bf16_vs_f32")) {
        const Json t = c.meta_json("rows_bf16_vs_f32");
        const size_t k = static_cast<size_t>(&r - runs.data());
        if (t.is_array() && k < t.size() && t[k].is_array() && t[k].size() == 2 && t[k][0].is_number() &&
            t[k][1].is_number())
          out << " (torch bf16's: " << sci(t[k][0].get<double>()) << ", " << sci(t[k][1].get<double>()) << ")";
      }
      out << " Frobenius\n";
      out << "    on bf16(float32 rows): ours " << db(psnr(pipe.generate(on_rows).picture, f32)) << " dB";
      if (c.has_meta("psnr_bf16_transformer_only")) {
        const Json t = c.meta_json("psnr_bf16_transformer_only");
        const size_t k = static_cast<size_t>(&r - runs.data());
        if (t.is_array() && k < t.size() && t[k].is_number()) out << ", torch bf16 " << db(t[k].get<double>()) << " dB";
      }
      out << " (the encoders' share is the rest)\n";
    }
  }
  if (stepped != c.steps().size())
    fail(c.path() + ": metadata \"steps\" names " + std::to_string(c.steps().size()) + " steps, but the gated runs' " +
         "tensors give " + std::to_string(stepped) + " (r<k>.s<i>.cond and .uncond for i = 0, 1, ... of each gated run)");
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::isinf(x) ? 100.0 : x;
    return s / double(v.size());
  };
  const double ours_mean = mean(ours_db), torch_mean = mean(torch_db);
  const double ours_worst = *std::min_element(ours_db.begin(), ours_db.end());
  const double torch_worst = *std::min_element(torch_db.begin(), torch_db.end());
  run.fact("schedule", schedule_same ? "bit-identical" : "DIFFERS", schedule_same);
  char b[64];
  std::snprintf(b, sizeof b, "max |d| %.2g", noise_worst);
  run.fact("noise", b, noise_worst <= kNoiseTolerance);
  run.fact("picture PSNR", "mean " + db(ours_mean) + " (torch bf16 " + db(torch_mean) + ") worst " + db(ours_worst) +
                               " (" + db(torch_worst) + ") dB",
           ours_mean >= torch_mean - kPsnrMarginDb && ours_worst >= torch_worst - kPsnrMarginDb);
  return run.finish();
}

}  // namespace tf::check::gate
