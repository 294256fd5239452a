#pragma once
// Several sequences packed along the token axis, described like cu_seqlens: offsets[0] = 0,
// offsets[s] <= offsets[s+1], offsets.back() = tokens. Sequence-mixing ops (causal conv, the delta
// rule, attention, rope positions) never look across a boundary; positions restart at 0 per sequence.
#include <cstdint>
#include <vector>

namespace tf {

using SeqOffsets = std::vector<int64_t>;

// Errors name the op when the offsets do not describe `tokens` tokens.
void check_seq_offsets(const char* op, const SeqOffsets& offsets, int64_t tokens);

// One sequence of `tokens` tokens: {0, tokens}.
inline SeqOffsets single_sequence(int64_t tokens) { return {0, tokens}; }

}  // namespace tf
