#pragma once
// The MOSS-Image encoder's reference gate (tf-moss-image-encoder check). A case written by
// python/cases/moss_image_case.py holds, per prompt, the ids, the float32 run's input of every step
// (each layer, then the final norm) and its final rows, torch bf16's output of each step on the
// float32 input rounded to bf16, and torch bf16's whole-prompt rows. Gates:
//   ids: our tokenizer's ids equal the case's;
//   steps: each step run alone on bf16(float32 input) is within twice torch bf16's distance from
//     float32 (or twice plain bf16 rounding's distance, if larger), in cosine error and in worst-row
//     relative error;
//   repeat: the whole prompt run twice gives the same bytes, and the prompts packed into one pass
//     give the same bytes as each run alone.
// Whole-prompt distances from float32 (ours and torch bf16's) are printed, not gated.
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "families/moss_image/encoder/encoder.h"

namespace tf::check {

struct EncoderGateOptions {
  std::string case_path;
  // The ids our tokenizer gives a prompt text, chat-formatted or raw (case metadata says which).
  std::function<std::vector<int32_t>(const std::string& text, bool chat)> tokenize;
  // Controls that must make the gate fail: one row of one step's result scaled by 1.05, or the
  // second whole-prompt run differing in one value.
  enum class Plant { None, RowOff, DifferingRepeat };
  Plant plant = Plant::None;
};

struct EncoderStepResult {
  int64_t prompt = 0, step = 0;
  double cos_ours = 0, cos_torch = 0, cos_round = 0, rel_ours = 0, rel_torch = 0, rel_round = 0;
  double cos_ratio = 0, rel_ratio = 0;  // ours / limit; pass when both <= 1
  bool pass = false;
};

struct EncoderGateReport {
  bool ids_match = true, steps_pass = true, repeat_same = true, packed_same = true;
  std::vector<EncoderStepResult> steps;
  double mean_ratio = 0, max_ratio = 0;  // over every step's cosine and worst-row ratios
  bool passed() const { return ids_match && steps_pass && repeat_same && packed_same; }
};

// Reads the case's small-parameter mode (rounded to bf16 or as stored) so the encoder can be loaded
// the way the case was made.
bool case_rounds_small_params(const std::string& case_path);

// Runs the gate and prints each step's line and a summary to `out`.
EncoderGateReport run_encoder_gate(const moss_image::Encoder& encoder, const EncoderGateOptions& options,
                                   std::ostream& out);

}  // namespace tf::check
