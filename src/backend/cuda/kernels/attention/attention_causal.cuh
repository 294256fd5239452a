#pragma once
// What the two tensor-core causal attention kernels (attention_mma.cuh, attention_wgmma.cuh) share:
// the query tile a block serves and the merge of the softmax's partial (max, sum) across a quad.
#include <cstdint>

#include "backend/cuda/primitives/device_math.cuh"

namespace tf::cuda::attention_causal {

// Block (x, head, sequence)'s query rows [row0, row0 + ROWS) and the keys they see, [start, start +
// n_keys) in `tiles` tiles of KEYS; the last tiles (the most keys) are started first.
struct QueryTile {
  int64_t start = 0, end = 0, row0 = 0;
  int n_keys = 0, tiles = 0;
};

// False when the block's tile lies past its sequence's end.
template <int ROWS, int KEYS>
__device__ __forceinline__ bool query_tile(const SeqTable& seqs, QueryTile& t) {
  t.start = seqs.offsets[blockIdx.z];
  t.end = seqs.offsets[blockIdx.z + 1];
  t.row0 = t.start + int64_t(gridDim.x - 1 - blockIdx.x) * ROWS;
  if (t.row0 >= t.end) return false;
  const int64_t last = (t.row0 + ROWS < t.end ? t.row0 + ROWS : t.end) - 1;
  t.n_keys = static_cast<int>(last - t.start + 1);
  t.tiles = (t.n_keys + KEYS - 1) / KEYS;
  return true;
}

// The four lanes of a quad hold partial (m, l) of the same two rows: a fixed butterfly merges them,
// the same bits in all four lanes. RECIPROCAL: l leaves as 1 / l.
template <bool RECIPROCAL = false>
__device__ __forceinline__ void merge_quad(float (&m)[2], float (&l)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float rm = m[r];
    rm = fmaxf(rm, __shfl_xor_sync(0xffffffffu, rm, 1));
    rm = fmaxf(rm, __shfl_xor_sync(0xffffffffu, rm, 2));
    float rl = (m[r] == -INFINITY) ? 0.0f : l[r] * expf(m[r] - rm);
    rl = rl + __shfl_xor_sync(0xffffffffu, rl, 1);
    rl = rl + __shfl_xor_sync(0xffffffffu, rl, 2);
    m[r] = rm;
    l[r] = RECIPROCAL ? 1.0f / rl : rl;
  }
}

}  // namespace tf::cuda::attention_causal
