#pragma once
// The one rule of the stepwise reference gate: a step passes when its result is finite and, in
// cosine error and in worst-row relative error, within kLimitFactor times the larger of torch bf16's
// distance from the reference and plain bf16 rounding's distance of the reference.
#include <optional>

#include "check/compare.h"
#include "core/tensor.h"

namespace tf::check::gate {

inline constexpr double kLimitFactor = 2.0;

// What a row is: the leading axis (tokens, [rows, ...]) or a position of a channel-major
// activation ([C, H, W]: the channels at one pixel).
enum class Rows { Tokens, Positions };

struct Verdict {
  Distance ours, rounding;
  std::optional<Distance> torch;  // absent: the case has no torch bf16 output for the step
  double limit_cosine = 0, limit_row = 0;
  double ratio = 0;  // the larger of ours / limit over both measures (inf when a limit is 0 and ours is not)
  bool pass = false;
};

// The rule on measured distances. A non-finite torch distance is ignored (it could only widen the limit).
Verdict judge(const Distance& ours, const std::optional<Distance>& torch, const Distance& rounding);

// got and ref (and torch, when given) of one shape, compared row by row as `rows` says.
Distance distance(const Tensor& got, const Tensor& ref, Rows rows);

// The rule on a step's tensors: rounding's distance is bf16(ref)'s.
Verdict judge_step(const Tensor& ours, const Tensor& ref, const Tensor* torch, Rows rows);

}  // namespace tf::check::gate
