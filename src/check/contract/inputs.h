#pragma once
// Deterministic random inputs and host tensor access for the contract's kernels.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "check/contract/tracked.h"
#include "core/tensor.h"

namespace tf::contract {

// splitmix64: the same stream on every machine and compiler.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  double uniform();                          // [0, 1)
  double uniform(double lo, double hi);      // [lo, hi)
  double normal();                           // standard normal (Box-Muller)
  int64_t below(int64_t n);                  // [0, n)
  Rng fork(uint64_t salt);                   // an independent stream

 private:
  uint64_t state_;
};

// Host tensors filled from values (rounded to the dtype: BF16 with ties to even, F32, I32).
Tensor host_tensor(DType t, Shape s, std::span<const double> values);
Tensor host_empty(DType t, Shape s);
// Normal(0, sigma) values rounded to the dtype.
Tensor random_normal(Rng& rng, DType t, Shape s, double sigma = 1.0);
Tensor random_uniform(Rng& rng, DType t, Shape s, double lo, double hi);

// A host tensor's values as float64 (BF16, F16, F32, F64, I32, I64).
std::vector<double> values_of(const Tensor& t);
// Exact tracked values of a host tensor's elements.
std::vector<Tracked> tracked_of(const Tensor& t);
// Overwrites a host tensor from values (rounded to its dtype).
void set_values(Tensor& t, std::span<const double> values);

// Rounds float64 values the way a tensor of dtype t stores them.
double stored_value(DType t, double x);

}  // namespace tf::contract
