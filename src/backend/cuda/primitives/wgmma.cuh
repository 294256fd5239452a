#pragma once
// Hopper warpgroup MMA (wgmma) on shared-memory operands: 128 threads multiply a 64 x 16 tile of A
// by a 16 x N tile of B, both read by the tensor cores straight from shared memory through
// 64-bit matrix descriptors. Operand tiles are K-major rows of 64 bf16 (128 bytes) with the
// 128-byte swizzle (16-byte chunk c of row r stored at chunk c ^ (r % 8)), 1024-byte aligned.
#include <cstdint>

#include "backend/cuda/primitives/tensor_core.cuh"

namespace tf::cuda {

// Descriptor of a K-major, 128-byte-swizzled tile at p: 8-row groups 1024 bytes apart.
__device__ __forceinline__ uint64_t wgmma_descriptor(const void* p) {
  const uint64_t a = shared_address(p);
  return ((a & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

// Descriptor of a K-major tile of 32-deep rows (64 bytes) with the 64-byte swizzle at p: 8-row groups
// 512 bytes apart (512-byte aligned); k16 steps advance it as below.
__device__ __forceinline__ uint64_t wgmma_descriptor_64b(const void* p) {
  const uint64_t a = shared_address(p);
  return ((a & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(512 >> 4) << 32) | (uint64_t(2) << 62);
}

// The same tile advanced by k16 steps of 16 bf16 (32 bytes each) inside its 128-byte rows.
__device__ __forceinline__ uint64_t wgmma_descriptor_at_k16(uint64_t desc, int k16) { return desc + uint64_t(2 * k16); }

// Pins accumulator registers in place around wgmma: the compiler may not move their reads or
// writes across this point (the MMAs write them asynchronously until wgmma_wait_all).
template <int N>
__device__ __forceinline__ void wgmma_fence_registers(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Orders this thread's earlier shared-memory writes (generic proxy) before the tensor cores' reads.
__device__ __forceinline__ void fence_shared_for_async_proxy() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
// Waits until at most N committed groups of this warpgroup are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// d[64 x N] += a[64 x 16] b[N x 16]^T (both tiles K-major), bf16 in, fp32 accumulate, N = 8 .. 128 in eights, and 192.
// Thread t of the warpgroup holds rows 16 (t / 32) + (t % 32) / 4 (+8) and columns 8 j + 2 (t % 4)
// (+1): d[4 j] (r, c), d[4 j + 1] (r, c + 1), d[4 j + 2] (r + 8, c), d[4 j + 3] (r + 8, c + 1).
// accumulate = 0: d = a b^T (d's old values not read, so it needs no zeroing).
template <int N>
__device__ void wgmma_m64k16_bf16(float (&d)[N / 2], uint64_t a, uint64_t b, int accumulate = 1);

// d[64 x N] += a[64 x 16] b[16 x N], a in registers (bf16 pairs), b MN-major in shared memory (rows of
// 64 bf16 along N, 128-byte swizzle; see wgmma_descriptor_mn_major), N = 64 or 128.
template <int N>
__device__ void wgmma_m64k16_bf16_reg_a(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b, int accumulate = 1);

// Descriptor of an MN-major, 128-byte-swizzled B tile at p: each k row holds 64 bf16 of N (128 bytes),
// 8-row groups 1024 bytes apart, the next 64 of N `n_block_bytes` on.
__device__ __forceinline__ uint64_t wgmma_descriptor_mn_major(const void* p, uint32_t n_block_bytes) {
  const uint64_t a = shared_address(p);
  return ((a & 0x3FFFF) >> 4) | (uint64_t((n_block_bytes & 0x3FFFF) >> 4) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}

// The instruction for one N: its N / 2 accumulators are operands %0 .. %(N/2 - 1), then the two
// descriptors and the accumulate flag.
#define TF_WGMMA_REGS_8 "%0, %1, %2, %3"
#define TF_WGMMA_REGS_16 TF_WGMMA_REGS_8 ", %4, %5, %6, %7"
#define TF_WGMMA_REGS_24 TF_WGMMA_REGS_16 ", %8, %9, %10, %11"
#define TF_WGMMA_REGS_32 TF_WGMMA_REGS_24 ", %12, %13, %14, %15"
#define TF_WGMMA_REGS_40 TF_WGMMA_REGS_32 ", %16, %17, %18, %19"
#define TF_WGMMA_REGS_48 TF_WGMMA_REGS_40 ", %20, %21, %22, %23"
#define TF_WGMMA_REGS_56 TF_WGMMA_REGS_48 ", %24, %25, %26, %27"
#define TF_WGMMA_REGS_64 TF_WGMMA_REGS_56 ", %28, %29, %30, %31"
#define TF_WGMMA_REGS_72 TF_WGMMA_REGS_64 ", %32, %33, %34, %35"
#define TF_WGMMA_REGS_80 TF_WGMMA_REGS_72 ", %36, %37, %38, %39"
#define TF_WGMMA_REGS_88 TF_WGMMA_REGS_80 ", %40, %41, %42, %43"
#define TF_WGMMA_REGS_96 TF_WGMMA_REGS_88 ", %44, %45, %46, %47"
#define TF_WGMMA_REGS_104 TF_WGMMA_REGS_96 ", %48, %49, %50, %51"
#define TF_WGMMA_REGS_112 TF_WGMMA_REGS_104 ", %52, %53, %54, %55"
#define TF_WGMMA_REGS_120 TF_WGMMA_REGS_112 ", %56, %57, %58, %59"
#define TF_WGMMA_REGS_128 TF_WGMMA_REGS_120 ", %60, %61, %62, %63"
#define TF_WGMMA_REGS_136 TF_WGMMA_REGS_128 ", %64, %65, %66, %67"
#define TF_WGMMA_REGS_144 TF_WGMMA_REGS_136 ", %68, %69, %70, %71"
#define TF_WGMMA_REGS_152 TF_WGMMA_REGS_144 ", %72, %73, %74, %75"
#define TF_WGMMA_REGS_160 TF_WGMMA_REGS_152 ", %76, %77, %78, %79"
#define TF_WGMMA_REGS_168 TF_WGMMA_REGS_160 ", %80, %81, %82, %83"
#define TF_WGMMA_REGS_176 TF_WGMMA_REGS_168 ", %84, %85, %86, %87"
#define TF_WGMMA_REGS_184 TF_WGMMA_REGS_176 ", %88, %89, %90, %91"
#define TF_WGMMA_REGS_192 TF_WGMMA_REGS_184 ", %92, %93, %94, %95"
#define TF_WGMMA_OUTS_8 TF_WGMMA_OUT4(0)
#define TF_WGMMA_OUTS_16 TF_WGMMA_OUTS_8, TF_WGMMA_OUT4(4)
#define TF_WGMMA_OUTS_24 TF_WGMMA_OUTS_16, TF_WGMMA_OUT4(8)
#define TF_WGMMA_OUTS_32 TF_WGMMA_OUTS_24, TF_WGMMA_OUT4(12)
#define TF_WGMMA_OUTS_40 TF_WGMMA_OUTS_32, TF_WGMMA_OUT4(16)
#define TF_WGMMA_OUTS_48 TF_WGMMA_OUTS_40, TF_WGMMA_OUT4(20)
#define TF_WGMMA_OUTS_56 TF_WGMMA_OUTS_48, TF_WGMMA_OUT4(24)
#define TF_WGMMA_OUTS_64 TF_WGMMA_OUTS_56, TF_WGMMA_OUT4(28)
#define TF_WGMMA_OUTS_72 TF_WGMMA_OUTS_64, TF_WGMMA_OUT4(32)
#define TF_WGMMA_OUTS_80 TF_WGMMA_OUTS_72, TF_WGMMA_OUT4(36)
#define TF_WGMMA_OUTS_88 TF_WGMMA_OUTS_80, TF_WGMMA_OUT4(40)
#define TF_WGMMA_OUTS_96 TF_WGMMA_OUTS_88, TF_WGMMA_OUT4(44)
#define TF_WGMMA_OUTS_104 TF_WGMMA_OUTS_96, TF_WGMMA_OUT4(48)
#define TF_WGMMA_OUTS_112 TF_WGMMA_OUTS_104, TF_WGMMA_OUT4(52)
#define TF_WGMMA_OUTS_120 TF_WGMMA_OUTS_112, TF_WGMMA_OUT4(56)
#define TF_WGMMA_OUTS_128 TF_WGMMA_OUTS_120, TF_WGMMA_OUT4(60)
#define TF_WGMMA_OUTS_136 TF_WGMMA_OUTS_128, TF_WGMMA_OUT4(64)
#define TF_WGMMA_OUTS_144 TF_WGMMA_OUTS_136, TF_WGMMA_OUT4(68)
#define TF_WGMMA_OUTS_152 TF_WGMMA_OUTS_144, TF_WGMMA_OUT4(72)
#define TF_WGMMA_OUTS_160 TF_WGMMA_OUTS_152, TF_WGMMA_OUT4(76)
#define TF_WGMMA_OUTS_168 TF_WGMMA_OUTS_160, TF_WGMMA_OUT4(80)
#define TF_WGMMA_OUTS_176 TF_WGMMA_OUTS_168, TF_WGMMA_OUT4(84)
#define TF_WGMMA_OUTS_184 TF_WGMMA_OUTS_176, TF_WGMMA_OUT4(88)
#define TF_WGMMA_OUTS_192 TF_WGMMA_OUTS_184, TF_WGMMA_OUT4(92)
#define TF_WGMMA_OUT4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define TF_WGMMA(N, A, B, SCALE)                                                                  \
  template <>                                                                                      \
  __device__ __forceinline__ void wgmma_m64k16_bf16<N>(float(&d)[N / 2], uint64_t a, uint64_t b, int accumulate) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE ", 0;\n"                              \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 {" TF_WGMMA_REGS_##N   \
                 "}, " A ", " B ", p, 1, 1, 0, 0;\n}\n"                                             \
                 : TF_WGMMA_OUTS_##N                                                               \
                 : "l"(a), "l"(b), "r"(accumulate));                                               \
  }
TF_WGMMA(8, "%4", "%5", "%6")
TF_WGMMA(16, "%8", "%9", "%10")
TF_WGMMA(24, "%12", "%13", "%14")
TF_WGMMA(32, "%16", "%17", "%18")
TF_WGMMA(40, "%20", "%21", "%22")
TF_WGMMA(48, "%24", "%25", "%26")
TF_WGMMA(56, "%28", "%29", "%30")
TF_WGMMA(64, "%32", "%33", "%34")
TF_WGMMA(72, "%36", "%37", "%38")
TF_WGMMA(80, "%40", "%41", "%42")
TF_WGMMA(88, "%44", "%45", "%46")
TF_WGMMA(96, "%48", "%49", "%50")
TF_WGMMA(104, "%52", "%53", "%54")
TF_WGMMA(112, "%56", "%57", "%58")
TF_WGMMA(120, "%60", "%61", "%62")
TF_WGMMA(128, "%64", "%65", "%66")
TF_WGMMA(192, "%96", "%97", "%98")
#undef TF_WGMMA
// A from registers; B MN-major (imm-trans-b 1): the registers of the A operand follow the
// accumulator layout of a 64 x 16 tile, a[0] (r, 2 (t % 4)), a[1] (r + 8, ...), a[2] (r, 8 + ...), a[3] (r + 8, 8 + ...).
#define TF_WGMMA_RA(N, A0, B, SCALE)                                                                 \
  template <>                                                                                      \
  __device__ __forceinline__ void wgmma_m64k16_bf16_reg_a<N>(float(&d)[N / 2], const uint32_t(&a)[4], uint64_t b, \
                                                             int accumulate) {                     \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE ", 0;\n"                              \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 {" TF_WGMMA_REGS_##N   \
                 "}, {" A0 "}, " B ", p, 1, 1, 1;\n}\n"                                           \
                 : TF_WGMMA_OUTS_##N                                                               \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));           \
  }
TF_WGMMA_RA(64, "%32, %33, %34, %35", "%36", "%37")
TF_WGMMA_RA(128, "%64, %65, %66, %67", "%68", "%69")
#undef TF_WGMMA_RA
#undef TF_WGMMA_OUT4
#undef TF_WGMMA_REGS_8
#undef TF_WGMMA_REGS_16
#undef TF_WGMMA_REGS_24
#undef TF_WGMMA_REGS_32
#undef TF_WGMMA_REGS_40
#undef TF_WGMMA_REGS_48
#undef TF_WGMMA_REGS_56
#undef TF_WGMMA_REGS_64
#undef TF_WGMMA_REGS_72
#undef TF_WGMMA_REGS_80
#undef TF_WGMMA_REGS_88
#undef TF_WGMMA_REGS_96
#undef TF_WGMMA_REGS_104
#undef TF_WGMMA_REGS_112
#undef TF_WGMMA_REGS_120
#undef TF_WGMMA_REGS_128
#undef TF_WGMMA_REGS_136
#undef TF_WGMMA_REGS_144
#undef TF_WGMMA_REGS_152
#undef TF_WGMMA_REGS_160
#undef TF_WGMMA_REGS_168
#undef TF_WGMMA_REGS_176
#undef TF_WGMMA_REGS_184
#undef TF_WGMMA_REGS_192
#undef TF_WGMMA_OUTS_8
#undef TF_WGMMA_OUTS_16
#undef TF_WGMMA_OUTS_24
#undef TF_WGMMA_OUTS_32
#undef TF_WGMMA_OUTS_40
#undef TF_WGMMA_OUTS_48
#undef TF_WGMMA_OUTS_56
#undef TF_WGMMA_OUTS_64
#undef TF_WGMMA_OUTS_72
#undef TF_WGMMA_OUTS_80
#undef TF_WGMMA_OUTS_88
#undef TF_WGMMA_OUTS_96
#undef TF_WGMMA_OUTS_104
#undef TF_WGMMA_OUTS_112
#undef TF_WGMMA_OUTS_120
#undef TF_WGMMA_OUTS_128
#undef TF_WGMMA_OUTS_136
#undef TF_WGMMA_OUTS_144
#undef TF_WGMMA_OUTS_152
#undef TF_WGMMA_OUTS_160
#undef TF_WGMMA_OUTS_168
#undef TF_WGMMA_OUTS_176
#undef TF_WGMMA_OUTS_184
#undef TF_WGMMA_OUTS_192

}  // namespace tf::cuda
