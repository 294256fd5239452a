#include "check/idol_vae_gate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/bf16.h"
#include "core/error.h"
#include "families/flux2_vae/pixels.h"
#include "families/flux2_vae/tokens.h"
#include "io/safetensors.h"

namespace tf::check {

namespace {



bool is_float(DType d) { return d == DType::F32 || d == DType::F64 || d == DType::BF16; }

// F32, F64 or BF16 -> F32.
Tensor as_f32(const Tensor& t) {
  require(is_float(t.dtype), "case tensor " + t.describe() + " is not F32, F64 or BF16");
  Tensor out = empty(DType::F32, t.shape);
  float* o = out.ptr<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype) {
      case DType::F32: o[i] = t.ptr<const float>()[i]; break;
      case DType::F64: o[i] = static_cast<float>(t.ptr<const double>()[i]); break;
      default: o[i] = float_from_bf16_bits(t.ptr<const uint16_t>()[i]); break;
    }
  }
  return out;
}

Tensor rounded_bf16(const Tensor& t) {
  Tensor out = as_f32(t);
  for (int64_t i = 0; i < out.numel(); ++i) out.ptr<float>()[i] = round_bf16(out.ptr<float>()[i]);
  return out;
}

RgbImage image_of(const Tensor& t) {
  RgbImage img;
  img.height = t.dim(0);
  img.width = t.dim(1);
  img.rgb.assign(t.ptr<const uint8_t>(), t.ptr<const uint8_t>() + t.numel());
  return img;
}

class Case {
 public:
  explicit Case(const std::string& path) : f_(SafetensorsFile::open(path)), path_(path) {
    auto it = f_->metadata().find("kind");
    require(it != f_->metadata().end() && it->second == "idol-vae",
            path + ": not an idol-vae case (metadata \"kind\" should be \"idol-vae\"; write it with python/cases/idol_case.py vae)");
  }
  Tensor get(const std::string& name) const {
    require(f_->has(name), path_ + ": the case has no tensor \"" + name + "\"");
    return f_->get(name);
  }
  // A float tensor (F32, F64 or BF16) of `shape`, as F32; `why` says where the shape comes from.
  Tensor floats(const std::string& name, const Shape& shape, const std::string& why) const {
    const Tensor t = get(name);
    require(is_float(t.dtype) && t.shape == shape, path_ + ": tensor \"" + name + "\" is " + t.describe() +
                                                       ", expected F32, F64 or BF16 " + shape_str(shape) + " (" + why + ")");
    return as_f32(t);
  }
  // An 8-bit RGB picture [H, W, 3].
  RgbImage picture(const std::string& name) const {
    const Tensor t = get(name);
    require(t.dtype == DType::U8 && t.rank() == 3 && t.dim(2) == 3,
            path_ + ": tensor \"" + name + "\" is " + t.describe() + ", expected U8 [H, W, 3]");
    return image_of(t);
  }
  bool has(const std::string& name) const { return f_->has(name); }
  std::string meta(const std::string& key) const {
    auto it = f_->metadata().find(key);
    require(it != f_->metadata().end(), path_ + ": the case's metadata has no \"" + key + "\"");
    return it->second;
  }
  const std::string& path() const { return path_; }

 private:
  std::shared_ptr<SafetensorsFile> f_;
  std::string path_;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

const Step& find_stage(const std::vector<Step>& stages, const std::string& name, const std::string& where) {
  for (const Step& s : stages)
    if (s.name == name) return s;
  fail(where + ": the case has stage \"" + name + "\" which this model does not (different geometry?)");
}

Distance compare(const std::string& stage, const Tensor& got, const Tensor& ref) {
  return stage.rfind("tokens.", 0) == 0 ? compare_rows(got, ref) : compare_positions(got, ref);
}

}  // namespace

VaeGateReport run_vae_gate(const flux2_vae::Vae& vae, const std::string& case_path, const VaeGateOptions& opt,
                           std::ostream& log) {
  const Case cs(case_path);
  const auto& cfg = vae.config();
  std::string plant_kind = opt.plant, plant_stage = "tokens.sample";
  if (const size_t at = opt.plant.find('@'); at != std::string::npos) {
    plant_kind = opt.plant.substr(0, at);
    plant_stage = opt.plant.substr(at + 1);
  }
  require(plant_kind.empty() || plant_kind == "row-error" || plant_kind == "padding-row",
          "--plant " + opt.plant + ": expected row-error[@STAGE] or padding-row");
  const RgbImage image = cs.picture("input.image");
  const Tensor x = flux2_vae::picture_to_input(image, cfg.picture_multiple(), case_path + ": tensor \"input.image\"");
  const int64_t h = image.height / cfg.downscale(), w = image.width / cfg.downscale(), cz = cfg.latent_channels;
  const std::string latent_why = "the latents of input.image under this model";
  const Tensor noise = cs.floats("input.noise", {cz, h, w}, latent_why);
  const Tensor latents = cs.floats("input.latents", {cz, h, w}, latent_why);
  const std::vector<std::string> stage_names = split(cs.meta("stages"));
  require(!stage_names.empty(), case_path + ": the case's metadata \"stages\" names no stage");
  VaeGateReport rep;
  log << "case " << case_path << ": " << image.width << "x" << image.height << ", reference "
      << cs.meta("reference") << "\n";
  log << "stage            ours: cosine  worst-row   limit: cosine  worst-row   torch bf16: cosine  worst-row  margin\n";

  std::string previous;
  Shape previous_shape;
  bool all = true;
  for (const std::string& name : stage_names) {
    Tensor got;
    if (name == "tokens.sample" || name == "tokens.mean") {
      const Tensor moments = cs.floats("ref.enc.moments", {2 * cz, h, w}, "this model's enc.moments");
      const Tensor z = flux2_vae::posterior_latents(moments, name == "tokens.sample" ? &noise : nullptr);
      got = flux2_vae::tokens_from_latents(z, vae.weights().bn_mean, vae.weights().bn_var, cfg.batch_norm_eps);
      if (plant_kind == "padding-row" && name == "tokens.sample") got.ptr<float>()[2 * got.dim(1) + 7] = 1e-3f;
    } else {
      const bool enc = name.rfind("enc.", 0) == 0;
      const Step& st = find_stage(enc ? vae.encoder() : vae.decoder(), name, case_path);
      Tensor in;
      if (name == "enc.conv_in") in = x;
      else if (name == "dec.conv_in") in = latents;
      else if (previous.empty() || (previous.rfind("enc.", 0) == 0) != enc)
        fail(case_path + ": stage \"" + name + "\" needs the reference output of the stage before it, but the case's " +
             "metadata \"stages\" lists none (it must start at enc.conv_in or dec.conv_in)");
      else in = cs.floats("ref." + previous, previous_shape, "this model's " + previous);
      got = to_device(st.run(to_device(in, vae.device())), Device::CPU);
      previous = name;
      previous_shape = got.shape;
    }
    if (plant_kind == "row-error" && name == plant_stage) {  // one row (token or position) 2% off
      const bool tokens = name.rfind("tokens.", 0) == 0;
      const int64_t rows = tokens ? got.dim(0) : got.numel() / got.dim(0), row = rows - 1 - rows / 3;
      const int64_t count = tokens ? got.dim(1) : got.dim(0), stride = tokens ? 1 : rows;
      float* base = got.ptr<float>() + (tokens ? row * got.dim(1) : row);
      for (int64_t c = 0; c < count; ++c) base[c * stride] *= 1.02f;
    }
    const Tensor ref = cs.floats("ref." + name, got.shape, "this model's " + name);
    VaeStageResult r;
    r.name = name;
    r.ours = compare(name, got, ref);
    r.rounding = compare(name, rounded_bf16(ref), ref);
    r.has_torch_bf16 = cs.has("bf16." + name);
    double cos_base = r.rounding.cosine_error, row_base = r.rounding.worst_row;
    if (r.has_torch_bf16) {
      r.torch_bf16 = compare(name, cs.floats("bf16." + name, got.shape, "this model's " + name), ref);
      cos_base = std::max(cos_base, r.torch_bf16.cosine_error);
      row_base = std::max(row_base, r.torch_bf16.worst_row);
    }
    r.limit_cosine = 2 * cos_base;
    r.limit_row = 2 * row_base;
    r.pass = r.ours.finite && r.ours.cosine_error <= r.limit_cosine && r.ours.worst_row <= r.limit_row;
    all = all && r.pass;
    const double margin = std::min(r.ours.cosine_error > 0 ? r.limit_cosine / r.ours.cosine_error : INFINITY,
                                   r.ours.worst_row > 0 ? r.limit_row / r.ours.worst_row : INFINITY);
    char line[320];
    std::snprintf(line, sizeof line, "%-15s  %10.3g  %9.3g   %12.3g  %9.3g   %17s  %9s  %s %s\n", name.c_str(),
                  r.ours.cosine_error, r.ours.worst_row, r.limit_cosine, r.limit_row,
                  r.has_torch_bf16 ? format_number("%.3g", r.torch_bf16.cosine_error).c_str() : "-",
                  r.has_torch_bf16 ? format_number("%.3g", r.torch_bf16.worst_row).c_str() : "-",
                  (std::isinf(margin) ? std::string("inf") : format_number("%.3gx", margin)).c_str(), r.pass ? "ok" : "FAIL");
    log << line;
    rep.stages.push_back(r);
  }

  // Whole runs, from the picture and from the latents: printed; the picture's levels and the
  // repeat are gated.
  const flux2_vae::Encoded e1 = vae.encode(x, &noise);
  const flux2_vae::Encoded e2 = vae.encode(x, &noise);
  rep.repeat_pass = same_bytes(e1.feature2, e2.feature2) && same_bytes(e1.latents, e2.latents);
  rep.whole_encode = compare_rows(e1.feature2, cs.floats("ref.tokens.sample", e1.feature2.shape, "this model's feature2"));
  if (cs.has("ref.tokens.mean"))
    rep.whole_encode_mean = compare_rows(vae.encode(x, nullptr).feature2,
                                         cs.floats("ref.tokens.mean", e1.feature2.shape, "this model's feature2"));
  const Tensor picture = vae.decode(latents);
  rep.whole_decode = compare_positions(picture, cs.floats("ref.dec.out", picture.shape, "this model's decoded picture"));
  const RgbImage ours = flux2_vae::output_to_picture(picture);
  const RgbImage want = cs.picture("ref.picture");
  require(want.width == ours.width && want.height == ours.height,
          case_path + ": tensor \"ref.picture\" is " + std::to_string(want.width) + "x" + std::to_string(want.height) +
              ", the decoded picture " + std::to_string(ours.width) + "x" + std::to_string(ours.height));
  for (size_t i = 0; i < ours.rgb.size(); ++i)
    rep.picture_max_level_difference = std::max(rep.picture_max_level_difference, std::abs(int(ours.rgb[i]) - int(want.rgb[i])));
  rep.picture_pass = rep.picture_max_level_difference <= 1;
  log << "whole encode (picture -> feature2, sample): " << describe(rep.whole_encode) << "\n";
  log << "whole encode (picture -> feature2, mean):   " << describe(rep.whole_encode_mean) << "\n";
  log << "whole decode (latents -> dec.out):          " << describe(rep.whole_decode) << "\n";
  log << "decoded picture: largest difference " << rep.picture_max_level_difference << " level(s) (limit 1) "
      << (rep.picture_pass ? "ok" : "FAIL") << "\n";
  log << "repeat: whole encode " << (rep.repeat_pass ? "byte for byte ok" : "DIFFERS: FAIL") << "\n";
  rep.pass = all && rep.picture_pass && rep.repeat_pass;
  log << (rep.pass ? "PASS" : "FAIL") << ": " << rep.stages.size() << " stages"
      << (opt.plant.empty() ? "" : " (planted fault: " + opt.plant + ")") << "\n";
  return rep;
}

}  // namespace tf::check
