#include "check/encoder_gate.h"

#include <algorithm>
#include <cstdio>

#include "check/compare.h"
#include "core/bf16.h"
#include "core/error.h"
#include "io/json_file.h"
#include "io/safetensors.h"

namespace tf::check {

namespace {

struct CasePrompt {
  std::string text;
  bool chat = true;
};

std::string meta(const SafetensorsFile& f, const std::string& key) {
  auto it = f.metadata().find(key);
  if (it == f.metadata().end()) fail(f.path() + ": case metadata lacks \"" + key + "\"");
  return it->second;
}

std::vector<CasePrompt> case_prompts(const SafetensorsFile& f) {
  if (meta(f, "kind") != "moss_image_encoder_case") fail(f.path() + ": not a MOSS-Image encoder case");
  Json list = parse_json(meta(f, "prompts"), f.path() + " metadata \"prompts\"");
  if (!list.is_array() || list.empty()) fail(f.path() + ": metadata \"prompts\" must be a non-empty list");
  std::vector<CasePrompt> out;
  for (const Json& p : list) {
    if (!p.is_object() || !p.contains("text") || !p.at("text").is_string())
      fail(f.path() + ": metadata \"prompts\" entry " + std::to_string(out.size()) + " must be an object with a string \"text\"");
    std::string fmt = json_string_or(p, "format", "chat", f.path() + " prompts");
    if (fmt != "chat" && fmt != "raw") fail(f.path() + ": prompt format \"" + fmt + "\", expected chat or raw");
    out.push_back({json_string_or(p, "text", "", f.path() + " prompts"), fmt == "chat"});
  }
  return out;
}

Tensor case_tensor(const SafetensorsFile& f, const std::string& name, DType dtype, const Shape& shape) {
  if (!f.has(name)) fail(f.path() + ": case lacks tensor \"" + name + "\"");
  Tensor t = f.get(name);
  expect_tensor(t, f.path(), name, dtype, shape);
  return t;
}

Tensor to_bf16_rows(const Tensor& f32) {
  Tensor r = empty(DType::BF16, f32.shape);
  for (int64_t i = 0; i < f32.numel(); ++i) r.ptr<uint16_t>()[i] = bf16_bits_from_float(f32.ptr<float>()[i]);
  return r;
}

Tensor slice(const Tensor& stacked, int64_t i) {  // [S, n, h] -> [n, h]
  return stacked.rows(i, i + 1).reshaped({stacked.dim(1), stacked.dim(2)});
}

}  // namespace

bool case_rounds_small_params(const std::string& case_path) {
  auto f = SafetensorsFile::open(case_path);
  std::string mode = meta(*f, "small_params");
  if (mode == "rounded_bf16") return true;
  if (mode == "as_stored") return false;
  fail(case_path + ": metadata \"small_params\" is \"" + mode + "\", expected rounded_bf16 or as_stored");
}

EncoderGateReport run_encoder_gate(const moss_image::Encoder& enc, const EncoderGateOptions& opt, std::ostream& out) {
  auto file = SafetensorsFile::open(opt.case_path);
  const SafetensorsFile& f = *file;
  const std::vector<CasePrompt> prompts = case_prompts(f);
  const int64_t H = enc.config().hidden, S = enc.steps();
  if (meta(f, "hidden") != std::to_string(H) || meta(f, "layers") != std::to_string(enc.config().layers))
    fail(opt.case_path + ": case is for " + meta(f, "layers") + " layers of hidden " + meta(f, "hidden") +
         ", the model has " + std::to_string(enc.config().layers) + " of " + std::to_string(H));
  out << "case " << opt.case_path << ": " << prompts.size() << " prompts; torch " << meta(f, "torch")
      << ", transformers " << meta(f, "transformers") << ", small params " << meta(f, "small_params") << "\n";

  EncoderGateReport rep;
  std::vector<std::vector<int32_t>> all_ids;
  std::vector<Tensor> single_runs;
  double ratio_sum = 0;
  int64_t ratio_count = 0;
  for (size_t k = 0; k < prompts.size(); ++k) {
    std::string p = "p";
    p += std::to_string(k);
    p += ".";
    if (!f.has(p + "ids")) fail(f.path() + ": case lacks tensor \"" + p + "ids\"");
    Tensor ids_t = f.get(p + "ids");
    if (ids_t.dtype != DType::I32 || ids_t.rank() != 1 || ids_t.dim(0) < 1)
      fail(f.path() + ": tensor \"" + p + "ids\" is " + ids_t.describe() + ", expected I32 [n] with n >= 1");
    const int64_t n = ids_t.dim(0);
    std::vector<int32_t> ids(ids_t.ptr<int32_t>(), ids_t.ptr<int32_t>() + n);
    for (int64_t t = 0; t < n; ++t)
      if (ids[t] < 0 || ids[t] >= enc.config().vocab_size)
        fail(f.path() + ": tensor \"" + p + "ids\" holds id " + std::to_string(ids[t]) + " at position " +
             std::to_string(t) + ", outside the model's vocabulary [0, " + std::to_string(enc.config().vocab_size) + ")");
    all_ids.push_back(ids);
    std::vector<int32_t> ours = opt.tokenize(prompts[k].text, prompts[k].chat);
    bool ids_ok = ours == ids;
    rep.ids_match = rep.ids_match && ids_ok;
    out << "prompt " << k << ": " << n << " tokens (" << (prompts[k].chat ? "chat" : "raw") << "), ids ";
    if (ids_ok) out << "match\n";
    else out << "DIFFER (ours: " << ours.size() << " tokens)\n";

    Tensor hidden = case_tensor(f, p + "f32.hidden", DType::F32, {S, n, H});
    Tensor final32 = case_tensor(f, p + "f32.final", DType::F32, {n, H});
    Tensor torch_steps = case_tensor(f, p + "bf16.step_out", DType::BF16, {S, n, H});
    Tensor torch_final = case_tensor(f, p + "bf16.final", DType::BF16, {n, H});
    const SeqOffsets one = single_sequence(n);
    for (int64_t s = 0; s < S; ++s) {
      Tensor ref = s + 1 < S ? slice(hidden, s + 1) : final32;
      Tensor ours_rows = enc.run_step(s, to_bf16_rows(slice(hidden, s)), one);
      if (opt.plant == EncoderGateOptions::Plant::RowOff && k == 0 && s == S / 2) {
        int64_t row = n / 2;  // one row 5% off
        for (int64_t i = 0; i < H; ++i) {
          uint16_t& b = ours_rows.ptr<uint16_t>()[row * H + i];
          b = bf16_bits_from_float(float_from_bf16_bits(b) * 1.05f);
        }
      }
      Distance d_ours = compare_rows(ours_rows, ref), d_torch = compare_rows(slice(torch_steps, s), ref),
               d_round = compare_rows(to_bf16_rows(ref), ref);
      EncoderStepResult r;
      r.prompt = static_cast<int64_t>(k);
      r.step = s;
      r.cos_ours = d_ours.cosine_error;
      r.cos_torch = d_torch.cosine_error;
      r.cos_round = d_round.cosine_error;
      r.rel_ours = d_ours.worst_row;
      r.rel_torch = d_torch.worst_row;
      r.rel_round = d_round.worst_row;
      const double cos_limit = 2 * std::max(r.cos_torch, r.cos_round), rel_limit = 2 * std::max(r.rel_torch, r.rel_round);
      r.cos_ratio = cos_limit > 0 ? r.cos_ours / cos_limit : (r.cos_ours > 0 ? INFINITY : 0);
      r.rel_ratio = rel_limit > 0 ? r.rel_ours / rel_limit : (r.rel_ours > 0 ? INFINITY : 0);
      r.pass = d_ours.finite && r.cos_ratio <= 1 && r.rel_ratio <= 1;
      rep.steps_pass = rep.steps_pass && r.pass;
      ratio_sum += r.cos_ratio + r.rel_ratio;
      ratio_count += 2;
      rep.max_ratio = std::max({rep.max_ratio, r.cos_ratio, r.rel_ratio});
      out << "  " << (r.pass ? "ok  " : "FAIL") << " " << enc.step_name(s) << ": cosine " << format_number("%.2e", r.cos_ours)
          << " (torch bf16 " << format_number("%.2e", r.cos_torch) << ", ratio " << format_number("%.3f", r.cos_ratio) << "), worst row "
          << format_number("%.2e", r.rel_ours) << " (torch bf16 " << format_number("%.2e", r.rel_torch) << ", ratio "
          << format_number("%.3f", r.rel_ratio) << ")\n";
      rep.steps.push_back(r);
    }

    Tensor whole = enc.forward(ids, one);
    Tensor again = enc.forward(ids, one);
    if (opt.plant == EncoderGateOptions::Plant::DifferingRepeat && k == 0)
      again.ptr<uint16_t>()[again.numel() / 2] ^= 1;  // one value one bit off
    bool same = same_bytes(whole, again);
    rep.repeat_same = rep.repeat_same && same;
    Distance w_ours = compare_rows(whole, final32), w_torch = compare_rows(torch_final, final32);
    out << "  whole prompt (not gated): cosine " << format_number("%.2e", w_ours.cosine_error) << " (torch bf16 "
        << format_number("%.2e", w_torch.cosine_error) << "), worst row " << format_number("%.2e", w_ours.worst_row) << " (torch bf16 "
        << format_number("%.2e", w_torch.worst_row) << "); repeat " << (same ? "identical" : "DIFFERS") << "\n";
    single_runs.push_back(whole);
  }

  // All prompts packed along the token axis must give each prompt's own bytes.
  if (prompts.size() > 1) {
    std::vector<int32_t> packed;
    SeqOffsets offs{0};
    for (auto& ids : all_ids) {
      packed.insert(packed.end(), ids.begin(), ids.end());
      offs.push_back(static_cast<int64_t>(packed.size()));
    }
    Tensor rows = enc.forward(packed, offs);
    for (size_t k = 0; k < all_ids.size(); ++k)
      rep.packed_same = rep.packed_same && same_bytes(rows.rows(offs[k], offs[k + 1]), single_runs[k]);
    out << "packed run of all " << prompts.size() << " prompts: " << (rep.packed_same ? "identical" : "DIFFERS")
        << " to the single runs\n";
  }
  rep.mean_ratio = ratio_count ? ratio_sum / ratio_count : 0;
  out << "steps: " << rep.steps.size() << " checked, ratio to limit mean " << format_number("%.3f", rep.mean_ratio) << " max "
      << format_number("%.3f", rep.max_ratio) << "\n";
  out << (rep.passed() ? "PASS" : "FAIL") << ": ids " << (rep.ids_match ? "match" : "differ") << ", steps "
      << (rep.steps_pass ? "within limits" : "outside limits") << ", repeat "
      << (rep.repeat_same ? "identical" : "differs") << ", packing " << (rep.packed_same ? "identical" : "differs")
      << "\n";
  return rep;
}

}  // namespace tf::check
