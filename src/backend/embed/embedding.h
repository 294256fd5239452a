#pragma once
// Embedding gather: out[t] = table[ids[t]] (a copy of bf16 rows, no rounding, no scaling).
#include "core/tensor.h"

namespace tf {

// Who checks the ids against the vocabulary: the op, on the host (a bad id is an error naming it),
// or the caller beforehand (no round trip to the host, so the op can be recorded; a bad id then
// gives a zero row, never a read outside the table).
enum class IdCheck { by_op, by_caller };

// table: BF16 [vocab, hidden]; ids: I32 [n], each in [0, vocab); out: BF16 [n, hidden].
void embedding(const Tensor& table, const Tensor& ids, Tensor& out, IdCheck check = IdCheck::by_op);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void embedding(const Tensor& table, const Tensor& ids, Tensor& out, IdCheck check);
}  // namespace cpu
namespace cuda {
void embedding(const Tensor& table, const Tensor& ids, Tensor& out, IdCheck check);
}  // namespace cuda

}  // namespace tf
