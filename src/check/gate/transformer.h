#pragma once
// The MOSS-Image transformer on the stepwise reference gate (tf-moss-image check transformer). Its
// case (component "moss_image.transformer", written by python/cases/moss_transformer_case.py) holds
// samples s<k> (a guidance step's branches: one sigma, their own prompt rows and skipped blocks) with
// inputs in.s<k>.latents (F32 [C, h, w]), in.s<k>.rows (BF16 [L, text_dim]), in.s<k>.sigma (F32 [1])
// and the steps s<k>.time ([8, dim]: the shared modulation's six chunks, the head's two),
// s<k>.video_embed, s<k>.text_embed, s<k>.text.<i>, s<k>.block.<i> (a skipped block has none) and
// s<k>.head (F32 [C, h, w]); metadata "samples" (JSON [{"text_length", "skip_layers"}]).
// Gated: each step alone on bf16(its f32 input) by the rule, a whole forward repeats byte for byte,
// and the samples packed into one pass give each sample's own bytes. Whole-forward distances are
// printed.
#include <ostream>
#include <string>

#include "check/gate/plant.h"
#include "check/gate/report.h"
#include "families/moss_image/transformer/transformer.h"

namespace tf::check::gate {

inline constexpr const char* kTransformerComponent = "moss_image.transformer";

struct TransformerGateOptions {
  std::string case_path;
  Plant plant;  // row (default: sample 0's middle block) or repeat
};

GateReport run_transformer_gate(const moss_image::Transformer& transformer, const TransformerGateOptions& options,
                                std::ostream& out);

}  // namespace tf::check::gate
