#pragma once
// Hopper's tensor memory accelerator and the shared-memory barriers that pace it: a producer thread
// asks for a tile (cp.async.bulk.tensor), the bytes land in shared memory and complete a
// transaction count on an mbarrier, consumers wait on the barrier's phase, then release the stage
// on a second barrier. Register budgets move from the producer warpgroup to the consumers.
#include <cuda.h>

#include <cstdint>

#include "backend/cuda/primitives/tensor_core.cuh"

namespace tf::cuda {

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count));
}
// A stage pipeline's barriers: full[i] completes on the producer's one arrival and its bytes, empty[i]
// on `consumers` arrivals (every consumer thread done with the stage).
__device__ __forceinline__ void mbarrier_init_stages(uint64_t* full, uint64_t* empty, int stages, int consumers) {
  for (int i = 0; i < stages; ++i) {
    mbarrier_init(full + i, 1);
    mbarrier_init(empty + i, consumers);
  }
}
// Makes the initialised barriers visible to the async proxy (TMA) and the rest of the block.
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(shared_address(bar))
               : "memory");
}
// One arrival that also announces `bytes` of TMA transactions still to land on this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(
                   shared_address(bar)),
               "r"(bytes)
               : "memory");
}
// Blocks until the barrier's phase with this parity has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred done;\n wait_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}

// The same for a warp that waits long (a store warp for a whole tile's products): it sleeps between
// tries, so its spinning does not take issue slots from the warps beside it.
__device__ __forceinline__ void mbarrier_wait_idle(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  for (;;) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
    if (done) return;
    __nanosleep(256);
  }
}

// A 2-D / 3-D box of the tensor map at the given element coordinates (innermost first) into
// shared memory; coordinates outside the tensor read as zeros.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::
          "r"(shared_address(dst)),
      "l"(map), "r"(shared_address(bar)), "r"(c0), "r"(c1)
      : "memory");
}
// The same with an L2 policy for the box's lines (l2_policy_evict_first: bytes read once a pass).
__device__ __forceinline__ void tma_load_2d_hinted(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                                   uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(shared_address(dst)),
      "l"(map), "r"(shared_address(bar)), "r"(c0), "r"(c1), "l"(policy)
      : "memory");
}
// A 4-D box, plain and with an L2 policy.
__device__ __forceinline__ void tma_load_4d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2,
                                            int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
      "[%2];\n" ::"r"(shared_address(dst)),
      "l"(map), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
__device__ __forceinline__ void tma_load_4d_hinted(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                                   int c2, int c3, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%3, %4, %5, %6}], [%2], %7;\n" ::"r"(shared_address(dst)),
      "l"(map), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "l"(policy)
      : "memory");
}
__device__ __forceinline__ uint64_t l2_policy_evict_first() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];\n" ::"r"(shared_address(dst)),
      "l"(map), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Warpgroup-wide register budget changes (every thread of the warpgroup executes them).
template <int N>
__device__ __forceinline__ void registers_decrease() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void registers_increase() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

}  // namespace tf::cuda
