#pragma once
// Raw launchers of the fp32-class channel-major kernels (device pointers, F32 activations [C, H, W],
// bf16 weights): convolutions, group norm, upsample, add, single-head attention. channels_f32_ops.cu
// wraps them for the ops' Tensors; tests and benchmarks may call them directly.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace tf::cuda {

namespace gemm {
struct TileStat;
}

struct ConvShape {
  int Ci, H, W;         // input as stored: [Ci, H, W]
  bool upsample_input;  // read the input through a nearest 2x upsample (logical size 2H x 2W)
  int Co, kh, kw;
  int stride, pad_top, pad_left, pad_bottom, pad_right;
  int Ho, Wo;  // output size; conv_output_size computes it
  const __nv_bfloat16* prepared = nullptr;  // w already in the layout `prepared_form` (conv_weights_form), or null
  int prepared_form = 0;
};
// Fills Ho, Wo from the logical input size, kernel, stride and padding.
void conv_output_size(ConvShape& s);

// The weights' layouts the convolution kernels read: w as given, tap-major with each tap's channels padded to
// 64 (the TMA kernels), a nearest 2x upsample's sub-pixel classes' summed weights (subpixel_weights.h).
enum ConvWeightsForm : int { kWeightsAsGiven = 0, kWeightsTapMajor = 1, kWeightsSubpixel = 2 };
// The layout the kernels of s read (with a GroupNorm folded into the split where norm), now (variants included).
int conv_weights_form(const ConvShape& s, bool norm);
// The elements of that layout, and w [Co, Ci, kh, kw] put into it (the kernels' per-call reordering, once).
size_t conv_weights_elems(const ConvShape& s, int form);
void launch_prepare_conv_weights(const __nv_bfloat16* w, const ConvShape& s, int form, __nv_bfloat16* out,
                                 cudaStream_t stream);

// The kernels are chosen by shape and by the variant table (backend/variants.h: TF_CONV_TILE,
// TF_CONV_KERNEL, TF_SPLIT_OPERANDS, TF_CHANNELS_ATTENTION_KERNEL, TF_SOFTMAX_ROWS).
// The row width whose register-resident softmax kernel rows of N take now, or 0 (the strided kernel).
int softmax_rows_resident_width(int N);
// Device workspace (bytes) launch_conv2d needs (the weights reordered tap-major and, for the TMA
// kernel, the input split into channels-last bf16 hi and lo; 0 if unused).
size_t conv_workspace_bytes(const ConvShape& s);
// y[Co, Ho, Wo] = conv(x) + bias (+ residual, same shape as y). w: [Co, Ci, kh, kw].
// Supports kh == kw in {1, 3}, stride 1 or 2. Error (tf::Error) otherwise.
// With tile_stats (requires conv_stats_tiles(s, false, residual) > 0) y's rows are also summarised per run there
// by the consumers (gemm::TileStat, [Co, conv_stats_tiles]), for launch_group_stats_of_tiles.
void launch_conv2d(const float* x, const __nv_bfloat16* w, const __nv_bfloat16* bias, const float* residual,
                   float* y, const ConvShape& s, void* workspace, cudaStream_t stream,
                   gemm::TileStat* tile_stats = nullptr);
// The runs a row over which the kernel of s (a GroupNorm folded in where norm; a residual where residual)
// summarises its output's rows as its consumers stage them (TF_GROUP_STATS=rows: row tiles; all: halo too), or 0.
int conv_stats_tiles(const ConvShape& s, bool norm, bool residual);

// A GroupNorm whose statistics are computed (launch_group_norm_stats) and whose per-element map
// is left to the pass that reads x next.
struct GroupNormApply {
  const double2* mean_rstd;  // per group: (mean, 1 / sqrt(var + eps))
  const __nv_bfloat16* gamma;
  const __nv_bfloat16* beta;
  int Cg;  // channels per group
  bool silu;
};
// Whether launch_conv2d can fold a GroupNorm of its input into its operand split (the TMA kernel).
bool conv_folds_group_norm(const ConvShape& s);

// Workspace (bytes) group_norm needs: its per-block partial sums and the groups' (mean, rstd).
size_t group_norm_workspace_bytes(int C, int64_t HW, int groups);
// mean_rstd[g] = (mean, 1 / sqrt(var + eps)) of group g of x [C, HW] (biased variance): per-block sums of the values
// shifted by the group's first value, in double, combined in a fixed order. workspace: group_norm_workspace_bytes.
void launch_group_stats(const float* x, int C, int64_t HW, int groups, float eps, double2* mean_rstd, void* workspace,
                        cudaStream_t stream);
// The same from the consumers' run summaries (gemm::TileStat, [C, T], L values a group in all): each run's sums
// moved to the group's shift (its first run's k) and summed in double in a fixed order, then as
// launch_group_stats. workspace: group_stats_of_tiles_workspace_bytes.
size_t group_stats_of_tiles_workspace_bytes(int C, int T, int groups);
void launch_group_stats_of_tiles(const gemm::TileStat* tiles, int C, int T, int64_t L, int groups, float eps,
                                 double2* mean_rstd, void* workspace, cudaStream_t stream);
// y = GroupNorm(x) * gamma + beta, then SiLU when asked; x may equal y.
void launch_group_norm(const float* x, const __nv_bfloat16* gamma, const __nv_bfloat16* beta, int C, int64_t HW,
                       int groups, float eps, bool silu, float* y, void* workspace, cudaStream_t stream);

// y = GroupNorm(x) with its statistics known (n), then SiLU when n asks; x may equal y.
void launch_group_norm_apply(const float* x, const GroupNormApply& n, int C, int64_t HW, float* y,
                             cudaStream_t stream);
// group_norm's first two launches: the statistics, for a later pass to apply.
GroupNormApply launch_group_norm_stats(const float* x, const __nv_bfloat16* gamma, const __nv_bfloat16* beta, int C,
                                       int64_t HW, int groups, float eps, bool silu, void* workspace,
                                       cudaStream_t stream);
// y = conv(group_norm(x)) + bias (+ residual) with the normalised picture never stored; requires
// conv_folds_group_norm(s). The bytes of launch_group_norm followed by launch_conv2d.
// With `beside` it also takes y_beside = conv1x1(x) + bias_beside of x itself, x's split for it made by the
// same pass (requires conv_beside_applies(s, Co_beside); workspace conv_beside_workspace_bytes(s)).
struct Conv1x1Beside {
  const __nv_bfloat16* w;  // [Co, Ci]
  const __nv_bfloat16* bias;
  float* y;  // [Co, H, W]
  int Co;
};
void launch_group_norm_conv2d(const float* x, const GroupNormApply& norm, const __nv_bfloat16* w,
                              const __nv_bfloat16* bias, const float* residual, float* y, const ConvShape& s,
                              void* workspace, cudaStream_t stream, const Conv1x1Beside* beside = nullptr,
                              gemm::TileStat* tile_stats = nullptr);
bool conv_beside_applies(const ConvShape& s, int Co_beside);
size_t conv_beside_workspace_bytes(const ConvShape& s);

// y[C, 2H, 2W] = x[C, H, W] repeated 2 x 2.
void launch_upsample_nearest2x(const float* x, int C, int H, int W, float* y, cudaStream_t stream);

// y[i] = a[i] + b[i] in fp32; y may alias a or b.
void launch_add(const float* a, const float* b, int64_t n, float* y, cudaStream_t stream);

// Workspace (floats) attention needs: one block of query rows' scores, never the full N x N.
int attention_query_block(int N);
size_t attention_workspace_floats(int D, int N);
// o[D, N] = V softmax(scale * Q^T K)^T for one head; q, k, v, o channel-major [D, N].
void launch_attention_single_head(const float* q, const float* k, const float* v, int D, int N, float scale,
                                  float* o, float* workspace, cudaStream_t stream);

}  // namespace tf::cuda
