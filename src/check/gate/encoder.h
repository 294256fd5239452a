#pragma once
// The MOSS-Image prompt encoder on the stepwise reference gate (tf-moss-image check encoder).
// Its case (component "moss_image.encoder", written by python/cases/moss_image_case.py) holds, per
// prompt k, the steps p<k>.layer.<i> (i < layers) and p<k>.norm; the inputs in.p<k>.ids (I32 [n]) and
// in.p<k>.embeddings (F32 [n, hidden], layer 0's input; each later step takes the previous step's
// f32 output); whole.p<k>.bf16 (torch bf16's whole-prompt rows); and the metadata keys prompts
// (JSON [{"text", "format": "chat"|"raw"}]), small_params (rounded_bf16|as_stored), hidden, layers.
// Gated: each step alone on bf16(its f32 input) by the rule (rows are tokens), our tokenizer's ids
// equal the case's, a whole prompt repeats byte for byte, and all prompts packed into one pass give
// each prompt's own bytes. Whole-prompt distances are printed.
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "check/gate/plant.h"
#include "check/gate/report.h"
#include "families/moss_image/encoder/encoder.h"

namespace tf::check::gate {

inline constexpr const char* kEncoderComponent = "moss_image.encoder";

struct EncoderGateOptions {
  std::string case_path;
  // The ids our tokenizer gives a prompt's text, chat-formatted or raw.
  std::function<std::vector<int32_t>(const std::string& text, bool chat)> tokenize;
  Plant plant;  // row (default: prompt 0's middle step) or repeat
};

// The case's small-parameter mode: true when A_log and linear_attn.norm.weight were rounded to
// bf16, so the encoder can be loaded the way the case was made.
bool encoder_case_rounds_small_params(const std::string& case_path);

// Prompt k's steps in run order: p<k>.layer.0 .. p<k>.layer.<layers-1>, p<k>.norm.
std::vector<std::string> encoder_step_names(int64_t prompt, int64_t layers);

// Runs the gate, printing its table and summary to `out`.
GateReport run_encoder_gate(const moss_image::Encoder& encoder, const EncoderGateOptions& options, std::ostream& out);

}  // namespace tf::check::gate
