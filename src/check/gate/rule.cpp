#include "check/gate/rule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "check/gate/convert.h"

namespace tf::check::gate {

namespace {

double ratio_of(double ours, double limit) {
  if (limit > 0) return ours / limit;
  return ours > 0 || std::isnan(ours) ? std::numeric_limits<double>::infinity() : 0.0;
}

}  // namespace

Verdict judge(const Distance& ours, const std::optional<Distance>& torch, const Distance& rounding) {
  Verdict v;
  v.ours = ours;
  v.torch = torch;
  v.rounding = rounding;
  double cosine = rounding.cosine_error, row = rounding.worst_row;
  if (torch && torch->finite && std::isfinite(torch->cosine_error) && std::isfinite(torch->worst_row)) {
    cosine = std::max(cosine, torch->cosine_error);
    row = std::max(row, torch->worst_row);
  }
  v.limit_cosine = kLimitFactor * cosine;
  v.limit_row = kLimitFactor * row;
  v.ratio = std::max(ratio_of(ours.cosine_error, v.limit_cosine), ratio_of(ours.worst_row, v.limit_row));
  if (std::isnan(v.ratio)) v.ratio = std::numeric_limits<double>::infinity();
  // written so that a NaN distance fails
  v.pass = ours.finite && ours.cosine_error <= v.limit_cosine && ours.worst_row <= v.limit_row;
  return v;
}

Distance distance(const Tensor& got, const Tensor& ref, Rows rows) {
  return rows == Rows::Tokens ? compare_rows(got, ref) : compare_positions(got, ref);
}

Verdict judge_step(const Tensor& ours, const Tensor& ref, const Tensor* torch, Rows rows) {
  std::optional<Distance> t;
  if (torch) t = distance(*torch, ref, rows);
  return judge(distance(ours, ref, rows), t, distance(to_bf16(ref), ref, rows));
}

}  // namespace tf::check::gate
