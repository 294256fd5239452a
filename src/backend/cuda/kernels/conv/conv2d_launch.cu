// Convolution as an implicit GEMM: M = Co, N = Ho*Wo, K = Ci*kh*kw; the channel-major output
// [Co, Ho*Wo] is the GEMM's C exactly, and the im2col matrix is gathered tile by tile, never stored.
#include <string>

#include "backend/cuda/runtime/launch_check.h"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"
#include "backend/cuda/kernels/split_products/split_gemm_wgmma.cuh"
#include "backend/cuda/kernels/split_products/tma_gemm.h"
#include "backend/cuda/kernels/channels_f32.h"
#include "backend/cuda/kernels/conv/conv_few_outputs.cuh"
#include "backend/cuda/kernels/conv/subpixel_weights.h"
#include "backend/variants.h"

namespace tf::cuda {

void conv_output_size(ConvShape& s) {
  const int H = s.upsample_input ? 2 * s.H : s.H, W = s.upsample_input ? 2 * s.W : s.W;
  s.Ho = (H + s.pad_top + s.pad_bottom - s.kh) / s.stride + 1;
  s.Wo = (W + s.pad_left + s.pad_right - s.kw) / s.stride + 1;
}

namespace {
// The wgmma kernels where the gather allows them (TF_CONV_KERNEL).
bool wgmma_allowed() { return variant_is<Variant::conv_kernel>("auto"); }

// Convolutions the TMA kernels take: 64-deep channel tiles (at least 64 channels, a multiple of 32:
// 96 runs as 128 with zero padding), 3x3 at stride 1 or 2, 1x1 at stride 1.
bool tma_applies(const ConvShape& s) {
  return wgmma_allowed() && variant_is<Variant::split_operands>("auto") && s.Ci >= 64 && s.Ci % 32 == 0 &&
         s.kh == s.kw && split_tma_supports(s.Ci, s.kh, s.stride, false) && (s.kh == 3 || s.stride == 1);
}

// The TMA kernel's channels per tap: Ci rounded up to its 64-deep K tiles.
int padded_channels(int Ci) { return (Ci + 63) / 64 * 64; }

// A nearest 2x upsample and a 3x3 convolution run as sub-pixel classes (subpixel_weights.h).
bool subpixel_applies(const ConvShape& s, bool norm) {
  return s.upsample_input && !norm && s.kh == 3 && s.stride == 1 && s.pad_top == 1 && s.pad_left == 1 &&
         s.pad_bottom == 1 && s.pad_right == 1 && !conv_few_outputs_apply(s.Co, s.Ci, s.kh, s.stride) &&
         subpixel_supported(s.Ci, s.Co) && variant_is<Variant::conv_upsample>("subpixel");
}

size_t aligned(size_t bytes) { return (bytes + 255) & ~size_t(255); }
}  // namespace

size_t conv_workspace_bytes(const ConvShape& s) {
  const int taps = s.kh * s.kw;
  if (!tma_applies(s)) return s.kh == 3 && s.Ci % 32 == 0 ? size_t(s.Co) * s.Ci * 9 * sizeof(__nv_bfloat16) : 0;
  if (conv_few_outputs_apply(s.Co, s.Ci, s.kh, s.stride)) return 0;  // reads the picture itself
  const int Cp = padded_channels(s.Ci);
  // (the sub-pixel classes' weights and low-resolution picture where they apply; the upsampled path's otherwise)
  const size_t weights = taps > 1 || Cp != s.Ci ? size_t(s.Co) * Cp * taps * sizeof(__nv_bfloat16) : 0;
  const size_t picture = size_t(s.Ci) * (s.upsample_input ? 4 : 1) * s.H * s.W * sizeof(__nv_bfloat16);
  const size_t sub_weights = size_t(s.Co) * Cp * 28 * sizeof(__nv_bfloat16);
  const size_t sub_picture = size_t(s.Ci) * s.H * s.W * sizeof(__nv_bfloat16);
  if (subpixel_applies(s, false)) return aligned(sub_weights) + 2 * aligned(sub_picture);
  return aligned(weights) + 2 * aligned(picture);  // tap-major weights, x hi, x lo (channels last)
}

namespace {

// The TMA kernels' (and the few-outputs kernel's) epilogue for y.
gemm::Epilogue conv_epilogue(float* y, const __nv_bfloat16* bias, const float* residual, const ConvShape& s) {
  return {y, int64_t(s.Ho) * s.Wo, 1.f, bias, residual, s.Co, s.Ho * s.Wo};
}

// The picture (its pointers left null) and the window the TMA kernels read for s: the sub-pixel classes' at the
// picture's own size.
SplitPicture tma_picture(const ConvShape& s, bool subpixel) {
  const bool up = s.upsample_input && !subpixel;
  return {nullptr, nullptr, s.Ci, up ? 2 * s.H : s.H, up ? 2 * s.W : s.W};
}
ConvWindow tma_window(const ConvShape& s, bool subpixel) {
  if (subpixel) return {3, 1, 1, 1, s.H, s.W, true};
  return {s.kh, s.stride, s.pad_top, s.pad_left, s.Ho, s.Wo};
}

// e with y's rows summarised by the consumers into tile_stats where given (conv_stats_tiles' slots).
gemm::Epilogue with_tile_stats(gemm::Epilogue e, gemm::TileStat* tile_stats, const ConvShape& s, bool subpixel) {
  if (!tile_stats) return e;
  e.tile_stats = tile_stats;
  e.stats_tiles = split_tma_stats_tiles(s.Co, tma_picture(s, subpixel), tma_window(s, subpixel));
  if (e.stats_tiles == 0) fail("conv2d (cuda): this convolution's kernel takes no tile statistics of its output");
  return e;
}

// wp[co, tap * Cp + ci] = w[co, ci, tap] for ci < Ci, 0 for Ci <= ci < Cp (the K tiles' padding).
__global__ void permute_weights_tap_major(const __nv_bfloat16* __restrict__ w, int Ci, int Cp, int taps,
                                          int64_t total, __nv_bfloat16* __restrict__ wp) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;  // index into wp
  if (i >= total) return;
  const int64_t per_co = int64_t(Cp) * taps;
  const int64_t co = i / per_co;
  const int rem = int(i - co * per_co), tap = rem / Cp, ci = rem - tap * Cp;
  wp[i] = ci < Ci ? w[(co * Ci + ci) * taps + tap] : __float2bfloat16(0.f);
}

template <int NT, class Gather>
void run_gemm_nt(const gemm::Bf16KContig& a, const Gather& b, const gemm::Epilogue& e, cudaStream_t stream) {
  using namespace gemm;
  auto kernel = split_gemm_kernel<Bf16KContig, Gather, NT>;
  static bool attr = false;  // raising the dynamic shared-memory limit once per instantiation
  if (!attr) {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)),
               "conv2d: shared memory limit");
    attr = true;
  }
  const unsigned grid = unsigned((e.M + BM - 1) / BM) * unsigned((e.N + NT * 32 - 1) / (NT * 32));
  kernel<<<grid, THREADS, kSmemBytes, stream>>>(a, b, e);
  check_launch("conv2d (split_gemm_kernel)");
}

template <class Gather>
bool run_wgmma(const gemm::Bf16KContig&, const Gather&, const gemm::Epilogue&, cudaStream_t) {
  return false;
}

// The tap-major gather with 64-deep taps: the wgmma kernel.
template <int STRIDE, bool UP>
bool run_wgmma(const gemm::Bf16KContig& a, const gemm::ConvGatherTapMajor<STRIDE, UP>& b, const gemm::Epilogue& e,
               cudaStream_t stream) {
  if (!wgmma_allowed() || b.Ci % 64 != 0 || b.K % 64 != 0 || !a.vec16) return false;
  auto kernel = gemm_wgmma::conv_wgmma_kernel<STRIDE, UP>;
  static bool attr = false;
  if (!attr) {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(gemm_wgmma::kSmemBytes)),
               "conv2d: shared memory limit");
    attr = true;
  }
  const unsigned grid = unsigned((e.M + gemm_wgmma::BM - 1) / gemm_wgmma::BM) *
                        unsigned((e.N + gemm_wgmma::BN - 1) / gemm_wgmma::BN);
  kernel<<<grid, gemm_wgmma::THREADS, gemm_wgmma::kSmemBytes, stream>>>(a, b, e);
  check_launch("conv2d (conv_wgmma_kernel)");
  return true;
}

template <class Gather>
void run_gemm(const __nv_bfloat16* w, const Gather& b, const __nv_bfloat16* bias, const float* residual, float* y,
              int Co, cudaStream_t stream) {
  using namespace gemm;
  const int K = b.K, N = b.rows;
  Bf16KContig a{w, Co, K, (K % 8 == 0) && (reinterpret_cast<uintptr_t>(w) % 16 == 0)};
  Epilogue e{y, N, 1.f, bias, residual, Co, N};
  if (run_wgmma(a, b, e, stream)) return;
  if (variant_is<Variant::conv_tile>("64")) return run_gemm_nt<2>(a, b, e, stream);
  run_gemm_nt<4>(a, b, e, stream);
}

void launch_tap_major(const __nv_bfloat16* w, const ConvShape& s, int Cp, __nv_bfloat16* wp, cudaStream_t stream) {
  const int taps = s.kh * s.kw;
  const int64_t total = int64_t(s.Co) * Cp * taps;
  permute_weights_tap_major<<<unsigned((total + 255) / 256), 256, 0, stream>>>(w, s.Ci, Cp, taps, total, wp);
  check_launch("conv2d (permute_weights_tap_major)");
}

// The weights reordered tap-major, each tap's channels padded to Cp, at the workspace's start (the
// next free byte after them in *rest); taken as prepared where s carries them so.
const __nv_bfloat16* tap_major_weights(const __nv_bfloat16* w, const ConvShape& s, int Cp, void* workspace,
                                       unsigned char** rest, cudaStream_t stream) {
  const int64_t total = int64_t(s.Co) * Cp * s.kh * s.kw;
  *rest = static_cast<unsigned char*>(workspace) + aligned(size_t(total) * sizeof(__nv_bfloat16));
  if (s.prepared && s.prepared_form == kWeightsTapMajor && Cp == padded_channels(s.Ci)) return s.prepared;
  auto* wp = static_cast<__nv_bfloat16*>(workspace);
  launch_tap_major(w, s, Cp, wp, stream);
  return wp;
}

template <int STRIDE, bool UP>
void run_tap_major(const float* x, const __nv_bfloat16* w, const __nv_bfloat16* bias, const float* residual, float* y,
                   const ConvShape& s, void* workspace, cudaStream_t stream) {
  const int K = s.Ci * 9;
  unsigned char* rest = nullptr;
  const __nv_bfloat16* wp = tap_major_weights(w, s, s.Ci, workspace, &rest, stream);
  gemm::ConvGatherTapMajor<STRIDE, UP> b{x, UP ? 2 * s.H : s.H, UP ? 2 * s.W : s.W, s.W, int64_t(s.H) * s.W,
                                         s.Ho, s.Wo, s.pad_top, s.pad_left, s.Ci, 3, s.Ho * s.Wo, K};
  run_gemm(wp, b, bias, residual, y, s.Co, stream);
}

// The sub-pixel classes: the picture split at its own size, each class's weights summed, one launch.
void run_subpixel(const float* x, const __nv_bfloat16* w, const __nv_bfloat16* bias, const float* residual, float* y,
                  const ConvShape& s, void* workspace, cudaStream_t stream, gemm::TileStat* tile_stats) {
  auto* ws = static_cast<unsigned char*>(workspace);
  const int Cp = padded_channels(s.Ci);
  const __nv_bfloat16* wk = s.prepared_form == kWeightsSubpixel ? s.prepared : nullptr;
  if (!wk) {
    launch_subpixel_weights(w, s.Co, s.Ci, reinterpret_cast<__nv_bfloat16*>(ws), stream);
    wk = reinterpret_cast<__nv_bfloat16*>(ws);
  }
  ws += aligned(size_t(s.Co) * Cp * 28 * sizeof(__nv_bfloat16));
  auto* hi = reinterpret_cast<__nv_bfloat16*>(ws);
  auto* lo = reinterpret_cast<__nv_bfloat16*>(ws + aligned(size_t(s.H) * s.W * s.Ci * sizeof(__nv_bfloat16)));
  launch_split_channels_last(x, s.Ci, s.H, s.W, false, nullptr, hi, lo, stream);
  const gemm::Epilogue e = with_tile_stats(conv_epilogue(y, bias, residual, s), tile_stats, s, true);
  launch_split_tma(wk, nullptr, s.Co, {hi, lo, s.Ci, s.H, s.W}, tma_window(s, true), e, stream);
}

void run_tma(const float* x, const GroupNormApply* norm, const __nv_bfloat16* w, const __nv_bfloat16* bias,
             const float* residual, float* y, const ConvShape& s, void* workspace, cudaStream_t stream,
             const Conv1x1Beside* beside, gemm::TileStat* tile_stats) {
  if (subpixel_applies(s, norm != nullptr))
    return run_subpixel(x, w, bias, residual, y, s, workspace, stream, tile_stats);
  const int H = s.upsample_input ? 2 * s.H : s.H, W = s.upsample_input ? 2 * s.W : s.W;
  auto* ws = static_cast<unsigned char*>(workspace);
  const int Cp = padded_channels(s.Ci);
  if (conv_few_outputs_apply(s.Co, s.Ci, s.kh, s.stride)) {
    if (tile_stats) fail("conv2d (cuda): the few-outputs kernel takes no tile statistics of its output");
    launch_conv_few_outputs(x, s.Ci, s.H, s.W, s.upsample_input, norm, w, s.Co, s.pad_top, s.pad_left, s.Ho, s.Wo,
                            conv_epilogue(y, bias, residual, s), stream);
    return check_launch("conv2d (conv_few_outputs_kernel)");
  }
  const __nv_bfloat16* wk = s.kh == 3 || Cp != s.Ci ? tap_major_weights(w, s, Cp, workspace, &ws, stream) : w;
  auto* hi = reinterpret_cast<__nv_bfloat16*>(ws);
  auto* lo = reinterpret_cast<__nv_bfloat16*>(ws + aligned(size_t(H) * W * s.Ci * sizeof(__nv_bfloat16)));
  // x's own split for the convolution beside, after the workspace conv_workspace_bytes counts
  const size_t picture = aligned(size_t(H) * W * s.Ci * sizeof(__nv_bfloat16));
  auto* raw_hi = beside ? reinterpret_cast<__nv_bfloat16*>(static_cast<unsigned char*>(workspace) +
                                                           conv_workspace_bytes(s))
                        : nullptr;
  auto* raw_lo = beside ? reinterpret_cast<__nv_bfloat16*>(reinterpret_cast<unsigned char*>(raw_hi) + picture) : nullptr;
  launch_split_channels_last(x, s.Ci, s.H, s.W, s.upsample_input, norm, hi, lo, stream, raw_hi, raw_lo);
  const gemm::Epilogue e = with_tile_stats(conv_epilogue(y, bias, residual, s), tile_stats, s, false);
  launch_split_tma(wk, nullptr, s.Co, {hi, lo, s.Ci, H, W}, tma_window(s, false), e, stream);
  if (beside) {
    const gemm::Epilogue eb{beside->y, int64_t(H) * W, 1.f, beside->bias, nullptr, beside->Co, H * W};
    launch_split_tma(beside->w, nullptr, beside->Co, {raw_hi, raw_lo, s.Ci, H, W}, {1, 1, 0, 0, H, W}, eb, stream);
  }
}

template <int KS, int STRIDE, bool UP>
void run(const float* x, const __nv_bfloat16* w, const __nv_bfloat16* bias, const float* residual, float* y,
         const ConvShape& s, cudaStream_t stream) {
  gemm::ConvGather<KS, STRIDE, UP> b{x, UP ? 2 * s.H : s.H, UP ? 2 * s.W : s.W, s.W, int64_t(s.H) * s.W,
                                     s.Ho, s.Wo, s.pad_top, s.pad_left, s.Ho * s.Wo, s.Ci * KS * KS};
  run_gemm(w, b, bias, residual, y, s.Co, stream);
}

}  // namespace

namespace {

// The geometry every CUDA convolution kernel here supports; op names the caller in the error.
void check_conv_shape(const char* op, const ConvShape& s) {
  const std::string name = std::string(op) + " (cuda): ";
  if (s.kh != s.kw || (s.kh != 1 && s.kh != 3))
    fail(name + "kernel " + std::to_string(s.kh) + "x" + std::to_string(s.kw) + " unsupported (1x1 or 3x3)");
  if (s.stride != 1 && s.stride != 2) fail(name + "stride " + std::to_string(s.stride) + " unsupported");
  if (int64_t(s.Ho) * s.Wo >= (int64_t(1) << 31) || int64_t(s.Ci) * s.kh * s.kw >= (int64_t(1) << 31))
    fail(name + "problem too large for 32-bit tile indices");
}

}  // namespace

void launch_conv2d(const float* x, const __nv_bfloat16* w, const __nv_bfloat16* bias, const float* residual,
                   float* y, const ConvShape& s, void* workspace, cudaStream_t stream, gemm::TileStat* tile_stats) {
  check_conv_shape("conv2d", s);
  const bool up = s.upsample_input;
  if (tma_applies(s)) return run_tma(x, nullptr, w, bias, residual, y, s, workspace, stream, nullptr, tile_stats);
  if (tile_stats) fail("conv2d (cuda): this convolution's kernel takes no tile statistics of its output");
  if (conv_workspace_bytes(s) > 0) {
    if (s.stride == 1 && !up) return run_tap_major<1, false>(x, w, bias, residual, y, s, workspace, stream);
    if (s.stride == 1 && up) return run_tap_major<1, true>(x, w, bias, residual, y, s, workspace, stream);
    return run_tap_major<2, false>(x, w, bias, residual, y, s, workspace, stream);
  }
  if (s.kh == 3 && s.stride == 1 && !up) return run<3, 1, false>(x, w, bias, residual, y, s, stream);
  if (s.kh == 3 && s.stride == 1 && up) return run<3, 1, true>(x, w, bias, residual, y, s, stream);
  if (s.kh == 3 && s.stride == 2 && !up) return run<3, 2, false>(x, w, bias, residual, y, s, stream);
  if (s.kh == 1 && s.stride == 1 && !up && s.Ci % 32 == 0) {  // one tap: depth order is already ci
    gemm::ConvGatherTapMajor<1, false> b{x, s.H, s.W, s.W, int64_t(s.H) * s.W, s.Ho, s.Wo, s.pad_top, s.pad_left,
                                         s.Ci, 1, s.Ho * s.Wo, s.Ci};
    return run_gemm(w, b, bias, residual, y, s.Co, stream);
  }
  if (s.kh == 1 && s.stride == 1 && !up) return run<1, 1, false>(x, w, bias, residual, y, s, stream);
  fail("conv2d (cuda): this kernel/stride/upsample combination is not built");
}

bool conv_folds_group_norm(const ConvShape& s) { return tma_applies(s); }

int conv_stats_tiles(const ConvShape& s, bool norm, bool residual) {
  if (variant_is<Variant::group_stats>("pass") || !tma_applies(s) ||
      conv_few_outputs_apply(s.Co, s.Ci, s.kh, s.stride))
    return 0;
  const bool sub = subpixel_applies(s, norm);
  if (sub && residual) return 0;  // the store warps add that residual themselves
  return split_tma_stats_tiles(s.Co, tma_picture(s, sub), tma_window(s, sub), variant_is<Variant::group_stats>("all"));
}

int conv_weights_form(const ConvShape& s, bool norm) {
  if (!tma_applies(s) || conv_few_outputs_apply(s.Co, s.Ci, s.kh, s.stride)) return kWeightsAsGiven;
  if (subpixel_applies(s, norm)) return kWeightsSubpixel;
  return s.kh == 3 || padded_channels(s.Ci) != s.Ci ? kWeightsTapMajor : kWeightsAsGiven;
}

size_t conv_weights_elems(const ConvShape& s, int form) {
  const size_t Cp = size_t(padded_channels(s.Ci));
  if (form == kWeightsSubpixel) return size_t(s.Co) * Cp * 28;
  return form == kWeightsTapMajor ? size_t(s.Co) * Cp * s.kh * s.kw : 0;
}

void launch_prepare_conv_weights(const __nv_bfloat16* w, const ConvShape& s, int form, __nv_bfloat16* out,
                                 cudaStream_t stream) {
  if (form == kWeightsSubpixel) return launch_subpixel_weights(w, s.Co, s.Ci, out, stream);
  if (form == kWeightsTapMajor) return launch_tap_major(w, s, padded_channels(s.Ci), out, stream);
}

// The 1x1 convolution beside reads x's own split through the TMA kernels: unpadded 64-deep taps (its
// weights used as they are), outputs that are not few-outputs', a main convolution that splits x.
bool conv_beside_applies(const ConvShape& s, int Co_beside) {
  ConvShape b = s;
  b.Co = Co_beside, b.kh = b.kw = 1, b.stride = 1, b.pad_top = b.pad_left = b.pad_bottom = b.pad_right = 0;
  conv_output_size(b);
  return tma_applies(s) && !s.upsample_input && !conv_few_outputs_apply(s.Co, s.Ci, s.kh, s.stride) &&
         tma_applies(b) && s.Ci % 64 == 0 && !conv_few_outputs_apply(Co_beside, s.Ci, 1, 1);
}

size_t conv_beside_workspace_bytes(const ConvShape& s) {
  return conv_workspace_bytes(s) + 2 * aligned(size_t(s.H) * s.W * s.Ci * sizeof(__nv_bfloat16));
}

void launch_group_norm_conv2d(const float* x, const GroupNormApply& norm, const __nv_bfloat16* w,
                              const __nv_bfloat16* bias, const float* residual, float* y, const ConvShape& s,
                              void* workspace, cudaStream_t stream, const Conv1x1Beside* beside,
                              gemm::TileStat* tile_stats) {
  check_conv_shape("group_norm_conv2d", s);
  if (!tma_applies(s)) fail("group_norm_conv2d (cuda): this convolution cannot fold the GroupNorm (TMA kernel off, or "
                            "channels below 64 or not a multiple of 32)");
  if (beside && !conv_beside_applies(s, beside->Co))
    fail("group_norm_conv2d (cuda): this convolution cannot split x for the 1x1 convolution beside");
  run_tma(x, &norm, w, bias, residual, y, s, workspace, stream, beside, tile_stats);
}

}  // namespace tf::cuda
