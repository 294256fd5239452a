// Convolution as an implicit GEMM: M = Co, N = Ho*Wo, K = Ci*kh*kw; the channel-major output
// [Co, Ho*Wo] is the GEMM's C exactly, and the im2col matrix is gathered tile by tile, never stored.
#include <string>

#include "backend/cuda/launch_check.h"
#include "backend/cuda/split_gemm.cuh"
#include "backend/cuda/vae_kernels.h"

namespace tf::cuda {

void conv_output_size(ConvShape& s) {
  const int H = s.upsample_input ? 2 * s.H : s.H, W = s.upsample_input ? 2 * s.W : s.W;
  s.Ho = (H + s.pad_top + s.pad_bottom - s.kh) / s.stride + 1;
  s.Wo = (W + s.pad_left + s.pad_right - s.kw) / s.stride + 1;
}

namespace {

template <int KS, int STRIDE, bool UP>
void run(const float* x, const __nv_bfloat16* w, const __nv_bfloat16* bias, const float* residual, float* y,
         const ConvShape& s, cudaStream_t stream) {
  using namespace gemm;
  const int K = s.Ci * KS * KS;
  const int N = s.Ho * s.Wo;
  Bf16KContig a{w, s.Co, K, (K % 8 == 0) && (reinterpret_cast<uintptr_t>(w) % 16 == 0)};
  ConvGather<KS, STRIDE, UP> b{x, UP ? 2 * s.H : s.H, UP ? 2 * s.W : s.W, s.W, int64_t(s.H) * s.W,
                               s.Ho, s.Wo, s.pad_top, s.pad_left, N, K};
  Epilogue e{y, N, 1.f, bias, residual, s.Co, N};
  auto kernel = split_gemm_kernel<Bf16KContig, ConvGather<KS, STRIDE, UP>>;
  static bool attr = false;  // raising the dynamic shared-memory limit once per instantiation
  if (!attr) {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)),
               "conv2d: shared memory limit");
    attr = true;
  }
  dim3 grid((s.Co + BM - 1) / BM, (N + BN - 1) / BN);
  kernel<<<grid, THREADS, kSmemBytes, stream>>>(a, b, e);
  check_launch("conv2d (split_gemm_kernel)");
}

}  // namespace

void launch_conv2d(const float* x, const __nv_bfloat16* w, const __nv_bfloat16* bias, const float* residual,
                   float* y, const ConvShape& s, cudaStream_t stream) {
  if (s.kh != s.kw || (s.kh != 1 && s.kh != 3))
    fail("conv2d (cuda): kernel " + std::to_string(s.kh) + "x" + std::to_string(s.kw) + " unsupported (1x1 or 3x3)");
  if (s.stride != 1 && s.stride != 2) fail("conv2d (cuda): stride " + std::to_string(s.stride) + " unsupported");
  if (int64_t(s.Ho) * s.Wo >= (int64_t(1) << 31) || int64_t(s.Ci) * s.kh * s.kw >= (int64_t(1) << 31))
    fail("conv2d (cuda): problem too large for 32-bit tile indices");
  const bool up = s.upsample_input;
  if (s.kh == 3 && s.stride == 1 && !up) return run<3, 1, false>(x, w, bias, residual, y, s, stream);
  if (s.kh == 3 && s.stride == 1 && up) return run<3, 1, true>(x, w, bias, residual, y, s, stream);
  if (s.kh == 3 && s.stride == 2 && !up) return run<3, 2, false>(x, w, bias, residual, y, s, stream);
  if (s.kh == 1 && s.stride == 1 && !up) return run<1, 1, false>(x, w, bias, residual, y, s, stream);
  fail("conv2d (cuda): this kernel/stride/upsample combination is not built");
}

}  // namespace tf::cuda
