#include "check/gate/encoder.h"

#include <algorithm>
#include <optional>

#include "check/compare.h"
#include "check/gate/case.h"
#include "check/gate/convert.h"
#include "check/gate/gate.h"
#include "core/error.h"

namespace tf::check::gate {

namespace {

struct CasePrompt {
  std::string text;
  bool chat = true;
};

std::vector<CasePrompt> case_prompts(const Case& c) {
  const Json list = c.meta_json("prompts");
  if (!list.is_array() || list.empty()) fail(c.path() + ": metadata \"prompts\" must be a non-empty JSON array");
  std::vector<CasePrompt> out;
  for (const Json& p : list) {
    const std::string where = c.path() + ": metadata \"prompts\" entry " + std::to_string(out.size());
    if (!p.is_object() || !p.contains("text") || !p.at("text").is_string())
      fail(where + " must be an object with a string \"text\"");
    const std::string fmt = json_string_or(p, "format", "chat", where);
    if (fmt != "chat" && fmt != "raw") fail(where + ": format \"" + fmt + "\", expected chat or raw");
    out.push_back({p.at("text").get<std::string>(), fmt == "chat"});
  }
  return out;
}

// The case's steps must be this model's, prompt after prompt.
void expect_steps(const Case& c, size_t prompts, int64_t layers) {
  std::vector<std::string> want;
  for (size_t k = 0; k < prompts; ++k)
    for (std::string& s : encoder_step_names(static_cast<int64_t>(k), layers)) want.push_back(std::move(s));
  const std::vector<std::string>& got = c.steps();
  for (size_t i = 0; i < std::max(want.size(), got.size()); ++i)
    if (i >= want.size() || i >= got.size() || want[i] != got[i])
      fail(c.path() + ": metadata \"steps\" holds " + (i < got.size() ? "\"" + got[i] + "\"" : "nothing") + " at " +
           std::to_string(i) + ", expected " + (i < want.size() ? "\"" + want[i] + "\"" : "nothing") + " (" +
           std::to_string(prompts) + " prompts of " + std::to_string(layers) + " layers and the norm)");
}

std::vector<int32_t> case_ids(const Case& c, const std::string& p, int64_t vocab) {
  const Tensor t = c.input(p + "ids", {{DType::I32}, {-1}, "[n] with n >= 1", ""});
  std::vector<int32_t> ids(t.ptr<int32_t>(), t.ptr<int32_t>() + t.numel());
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      fail(c.path() + ": tensor \"in." + p + "ids\" holds id " + std::to_string(ids[i]) + " at position " +
           std::to_string(i) + ", outside the model's vocabulary [0, " + std::to_string(vocab) + ")");
  return ids;
}

// "p<k>.", built by appending: gcc 12 warns falsely (-Wrestrict) on "p" + to_string(k) + "."
std::string prompt_prefix(int64_t prompt) {
  std::string p = "p";
  p += std::to_string(prompt);
  p += '.';
  return p;
}

}  // namespace

std::vector<std::string> encoder_step_names(int64_t prompt, int64_t layers) {
  const std::string p = prompt_prefix(prompt);
  std::vector<std::string> names;
  for (int64_t i = 0; i < layers; ++i) names.push_back(p + "layer." + std::to_string(i));
  names.push_back(p + "norm");
  return names;
}

bool encoder_case_rounds_small_params(const std::string& case_path) {
  const Case c = Case::open(case_path, kEncoderComponent);
  const std::string mode = c.meta("small_params");
  if (mode == "rounded_bf16") return true;
  if (mode == "as_stored") return false;
  fail(case_path + ": metadata \"small_params\" is \"" + mode + "\", expected rounded_bf16 or as_stored");
}

GateReport run_encoder_gate(const moss_image::Encoder& enc, const EncoderGateOptions& opt, std::ostream& out) {
  require(opt.plant.kind != Plant::Kind::Extra, "--plant " + opt.plant.describe() + ": the encoder gate has no such plant");
  const Case c = Case::open(opt.case_path, kEncoderComponent);
  const std::vector<CasePrompt> prompts = case_prompts(c);
  const int64_t H = enc.config().hidden, L = enc.config().layers;
  if (c.meta("hidden") != std::to_string(H) || c.meta("layers") != std::to_string(L))
    fail(c.path() + ": the case is for " + c.meta("layers") + " layers of hidden " + c.meta("hidden") + ", the model has " +
         std::to_string(L) + " of " + std::to_string(H));
  expect_steps(c, prompts.size(), L);
  const std::vector<std::string> first = encoder_step_names(0, L);
  GateRun run(c, opt.plant, first[first.size() / 2], out);

  std::vector<std::vector<int32_t>> all_ids;
  std::vector<Tensor> single_runs;
  bool ids_match = true;
  for (size_t k = 0; k < prompts.size(); ++k) {
    const std::string p = prompt_prefix(static_cast<int64_t>(k));
    const std::vector<int32_t> ids = case_ids(c, p, enc.config().vocab_size);
    const int64_t n = static_cast<int64_t>(ids.size());
    const bool same_ids = opt.tokenize(prompts[k].text, prompts[k].chat) == ids;
    ids_match = ids_match && same_ids;
    out << "prompt " << k << ": " << n << (n == 1 ? " token (" : " tokens (") << (prompts[k].chat ? "chat" : "raw") << "), ids "
        << (same_ids ? "match" : "DIFFER") << "\n";
    const std::string rows_why = "prompt " + std::to_string(k) + "'s " + std::to_string(n) + " tokens of hidden " + std::to_string(H);
    Tensor input = c.input(p + "embeddings", {{DType::F32}, {n, H}, "", rows_why});
    const SeqOffsets one = single_sequence(n);
    const std::vector<std::string> names = encoder_step_names(static_cast<int64_t>(k), L);
    const std::vector<Step> steps = enc.stepwise(one);
    for (int64_t s = 0; s < static_cast<int64_t>(names.size()); ++s) {
      run.step(names[s], steps.at(s).run(to_bf16(input)), Rows::Tokens, rows_why);
      input = c.reference_output(names[s], {n, H}, rows_why);
    }
    const Tensor whole = enc.forward(ids, one);
    Tensor again = enc.forward(ids, one);
    if (run.plant().kind == Plant::Kind::Repeat && k == 0) flip_one_bit(again);
    run.repeat(same_bytes(whole, again));
    std::optional<Distance> torch;
    if (c.has("whole." + p + "bf16"))
      torch = compare_rows(c.whole(p + "bf16", {{DType::BF16}, {n, H}, "", rows_why}), input);
    run.whole("prompt " + std::to_string(k), compare_rows(whole, input), torch);
    all_ids.push_back(ids);
    single_runs.push_back(whole);
  }
  // All prompts packed along the token axis must give each prompt's own bytes.
  if (prompts.size() > 1) {
    std::vector<int32_t> packed;
    SeqOffsets offs{0};
    for (const auto& ids : all_ids) {
      packed.insert(packed.end(), ids.begin(), ids.end());
      offs.push_back(static_cast<int64_t>(packed.size()));
    }
    const Tensor rows = enc.forward(packed, offs);
    for (size_t k = 0; k < all_ids.size(); ++k) run.packing(same_bytes(rows.rows(offs[k], offs[k + 1]), single_runs[k]));
  }
  run.fact("ids", ids_match ? "match" : "DIFFER", ids_match);
  return run.finish();
}

}  // namespace tf::check::gate
