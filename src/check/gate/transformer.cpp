#include "check/gate/transformer.h"

#include <algorithm>
#include <optional>

#include "check/compare.h"
#include "check/gate/case.h"
#include "check/gate/convert.h"
#include "check/gate/gate.h"
#include "core/error.h"

namespace tf::check::gate {

namespace {

struct CaseSample {
  std::string prefix;  // "s<k>."
  moss_image::TransformerSample sample;
  float sigma = 0;
  int64_t h = 0, w = 0, L = 0;
};

// "s<k>.", built by appending: gcc 12 warns falsely (-Wrestrict) on "s" + to_string(k) + "."
std::string sample_prefix(size_t k) {
  std::string p = "s";
  p += std::to_string(k);
  p += '.';
  return p;
}

std::vector<CaseSample> case_samples(const Case& c, const moss_image::TransformerConfig& cfg) {
  const Json list = c.meta_json("samples");
  if (!list.is_array() || list.empty()) fail(c.path() + ": metadata \"samples\" must be a non-empty JSON array");
  std::vector<CaseSample> out;
  for (size_t k = 0; k < list.size(); ++k) {
    const Json& j = list[k];
    const std::string where = c.path() + ": metadata \"samples\" entry " + std::to_string(k);
    if (!j.is_object()) fail(where + " must be an object");
    CaseSample s;
    s.prefix = sample_prefix(k);
    if (j.contains("skip_layers")) {
      if (!j.at("skip_layers").is_array()) fail(where + ": \"skip_layers\" must be an array of block indices");
      for (const Json& l : j.at("skip_layers")) {
        if (!l.is_number_integer() || l.get<int64_t>() < 0 || l.get<int64_t>() >= cfg.layers)
          fail(where + ": \"skip_layers\" holds " + l.dump() + ", expected a block index 0 .. " + std::to_string(cfg.layers - 1));
        s.sample.skip_layers.push_back(l.get<int64_t>());
      }
    }
    s.sample.latents = to_f32(c.input(s.prefix + "latents", {{DType::F32}, {cfg.latent_channels, -1, -1},
                                                             "[" + std::to_string(cfg.latent_channels) + ", h, w]", ""}));
    s.sample.rows = c.input(s.prefix + "rows", {{DType::BF16}, {-1, cfg.text_dim}, "[L, " + std::to_string(cfg.text_dim) + "]", ""});
    const Tensor sigma = c.input(s.prefix + "sigma", {{DType::F32}, {1}, "", ""});
    s.sigma = sigma.ptr<const float>()[0];
    s.h = s.sample.latents.dim(1);
    s.w = s.sample.latents.dim(2);
    s.L = s.sample.rows.dim(0);
    out.push_back(std::move(s));
  }
  for (const CaseSample& s : out)
    if (s.sigma != out[0].sigma)
      fail(c.path() + ": the samples' sigmas differ; a packed pass shares one (a guidance step's branches)");
  return out;
}

std::vector<std::string> step_names(const CaseSample& s, const moss_image::TransformerConfig& cfg) {
  std::vector<std::string> n = {s.prefix + "time", s.prefix + "video_embed", s.prefix + "text_embed"};
  for (int64_t i = 0; i < cfg.text_blocks; ++i) n.push_back(s.prefix + "text." + std::to_string(i));
  for (int64_t i = 0; i < cfg.layers; ++i)
    if (!std::count(s.sample.skip_layers.begin(), s.sample.skip_layers.end(), i)) n.push_back(s.prefix + "block." + std::to_string(i));
  n.push_back(s.prefix + "head");
  return n;
}

void expect_steps(const Case& c, const std::vector<std::string>& want) {
  const std::vector<std::string>& got = c.steps();
  for (size_t i = 0; i < std::max(want.size(), got.size()); ++i)
    if (i >= want.size() || i >= got.size() || want[i] != got[i])
      fail(c.path() + ": metadata \"steps\" holds " + (i < got.size() ? "\"" + got[i] + "\"" : "nothing") + " at " +
           std::to_string(i) + ", expected " + (i < want.size() ? "\"" + want[i] + "\"" : "nothing") +
           " (this model's steps for the case's samples)");
}

Tensor concat_rows(const Tensor& a, const Tensor& b) {
  Tensor out = empty(a.dtype, {a.dim(0) + b.dim(0), a.dim(1)});
  Tensor top = out.rows(0, a.dim(0)), bottom = out.rows(a.dim(0), out.dim(0));
  copy_into(top, a);
  copy_into(bottom, b);
  return out;
}

}  // namespace

GateReport run_transformer_gate(const moss_image::Transformer& tr, const TransformerGateOptions& opt, std::ostream& out) {
  require(opt.plant.kind != Plant::Kind::Extra, "--plant " + opt.plant.describe() + ": the transformer gate has no such plant");
  const moss_image::TransformerConfig& cfg = tr.config();
  const Case c = Case::open(opt.case_path, kTransformerComponent);
  const std::vector<CaseSample> samples = case_samples(c, cfg);
  std::vector<std::string> all;
  for (const CaseSample& s : samples)
    for (std::string& n : step_names(s, cfg)) all.push_back(std::move(n));
  expect_steps(c, all);
  const std::vector<std::string> first = step_names(samples[0], cfg);
  GateRun run(c, opt.plant, first[3 + cfg.text_blocks + (first.size() - 4 - cfg.text_blocks) / 2], out);
  const int64_t D = cfg.dim;
  std::vector<Tensor> single;
  for (const CaseSample& s : samples) {
    const std::string& p = s.prefix;
    const int64_t hw = s.h * s.w, T = hw + s.L;
    const std::string why = "sample " + p.substr(0, p.size() - 1) + "'s " + std::to_string(s.h) + "x" + std::to_string(s.w) +
                            " latents and " + std::to_string(s.L) + " text rows";
    run.step(p + "time", tr.time_rows(s.sigma), Rows::Tokens, why);
    const Tensor time = to_bf16(c.reference_output(p + "time", {8, D}, why));
    run.step(p + "video_embed", tr.video_embed(s.sample.latents), Rows::Tokens, why);
    run.step(p + "text_embed", tr.text_embed(s.sample.rows), Rows::Tokens, why);
    Tensor text = c.reference_output(p + "text_embed", {s.L, D}, why);
    for (int64_t i = 0; i < cfg.text_blocks; ++i) {
      const std::string name = p + "text." + std::to_string(i);
      run.step(name, tr.text_block(i, to_bf16(text)), Rows::Tokens, why);
      text = c.reference_output(name, {s.L, D}, why);
    }
    Tensor x = concat_rows(to_f32(c.reference_output(p + "video_embed", {hw, D}, why)), to_f32(text));
    std::string last;
    for (int64_t i = 0; i < cfg.layers; ++i) {
      if (std::count(s.sample.skip_layers.begin(), s.sample.skip_layers.end(), i)) continue;
      last = p + "block." + std::to_string(i);
      run.step(last, tr.joint_block(i, to_bf16(x), time, s.h, s.w), Rows::Tokens, why);
      x = c.reference_output(last, {T, D}, why);
    }
    run.step(p + "head", tr.head(to_bf16(x), time, s.h, s.w), Rows::Positions, why);
    // The whole forward alone, twice: the bytes repeat.
    const Tensor whole = tr.velocity({s.sample}, s.sigma)[0];
    Tensor again = tr.velocity({s.sample}, s.sigma)[0];
    if (run.plant().kind == Plant::Kind::Repeat && single.empty()) flip_one_bit(again);
    run.repeat(same_bytes(whole, again));
    const Tensor ref = c.reference_output(p + "head", {cfg.latent_channels, s.h, s.w}, why);
    std::optional<Distance> torch;
    if (c.has("whole." + p + "bf16"))
      torch = compare_positions(c.whole(p + "bf16", {{DType::BF16}, {cfg.latent_channels, s.h, s.w}, "", why}), ref);
    run.whole("sample " + p.substr(0, p.size() - 1) + " forward", compare_positions(whole, ref), torch);
    single.push_back(whole);
  }
  // Every sample packed into one pass: each its own bytes.
  if (samples.size() > 1) {
    std::vector<moss_image::TransformerSample> packed;
    for (const CaseSample& s : samples) packed.push_back(s.sample);
    const std::vector<Tensor> v = tr.velocity(packed, samples[0].sigma);
    for (size_t k = 0; k < samples.size(); ++k) run.packing(same_bytes(v[k], single[k]));
  }
  return run.finish();
}

}  // namespace tf::check::gate
