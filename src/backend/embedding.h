#pragma once
// Embedding gather: out[t] = table[ids[t]] (a copy of bf16 rows, no rounding, no scaling).
#include "core/tensor.h"

namespace tf {

// table: BF16 [vocab, hidden]; ids: I32 [n], each in [0, vocab); out: BF16 [n, hidden].
void embedding(const Tensor& table, const Tensor& ids, Tensor& out);

}  // namespace tf
