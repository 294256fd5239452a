#pragma once
// Planted faults, the gate's controls: each must make a correct implementation's run FAIL.
//   row[@STEP]  one row of STEP's result (the component's default step when none is named) scaled
//               far past the step's limit;
//   repeat      the second whole run differs in one bit;
//   an extra    a component's own control, declared by name (the VAE's padding-row).
#include <string>
#include <vector>

#include "check/gate/rule.h"
#include "core/tensor.h"

namespace tf::check::gate {

struct Plant {
  enum class Kind { None, Row, Repeat, Extra };
  Kind kind = Kind::None;
  std::string step;  // Row: the step after '@' (empty: the component's default)
  std::string name;  // Extra: which one

  // `value`: --plant's value ("" or "none" for no plant); `extras`: the component's own plants.
  // Anything else is an error naming --plant and listing what is accepted.
  static Plant parse(const std::string& value, const std::vector<std::string>& extras = {});

  bool none() const { return kind == Kind::None; }
  bool is_extra(const std::string& extra) const { return kind == Kind::Extra && name == extra; }
  std::string describe() const;  // "row@p0.layer.2", "repeat", "padding-row", "none"
};

// The row factor that puts a row past `limit_row` whatever a correct result's own error is.
double planted_row_factor(double limit_row);

// Scales the row of `t` (F32 or BF16, CPU) with the largest norm by `factor`: a zero row would hide the fault.
void scale_largest_row(Tensor& t, Rows rows, double factor);

// Flips the lowest bit of the middle element's first byte (`t` on the CPU, at least one element).
void flip_one_bit(Tensor& t);

}  // namespace tf::check::gate
