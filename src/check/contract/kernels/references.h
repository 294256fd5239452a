#pragma once
// References that several contract entries share, on tracked values: an op made of other ops'
// steps composes their references instead of restating them.
#include <string>
#include <vector>

#include "backend/conv/conv2d.h"
#include "backend/device/seq_offsets.h"
#include "check/contract/kernel_contract.h"

namespace tf::contract {

// A residual add's d as its reference sees it: BF16 values, or a product's F32 k-share sums [P, rows, n]
// added in order and rounded to bf16 (residual_add.cpp). The faulty form for controls: the sum left
// unrounded, or its last share dropped.
std::vector<Tracked> residual_delta_reference(const Tensor& d);
std::vector<double> residual_delta_faulty(const Tensor& d, bool round_sum, bool drop_last);

// The conv's and the prep's references on tracked values, so an op made of both composes them.
// x: [T, C], w: [C, 1, K]; mixed: [T, 2 hk dk + hv dv]; returns q, k, v, beta, g.
std::vector<Tracked> causal_conv1d_silu_reference(const std::vector<Tracked>& x, const std::vector<Tracked>& w,
                                                  int64_t C, int64_t K, const SeqOffsets& o);
Reference delta_net_prep_reference(const std::vector<Tracked>& mixed, const std::vector<Tracked>& b,
                                   const std::vector<Tracked>& a, const std::vector<Tracked>& alog,
                                   const std::vector<Tracked>& dt, int64_t hk, int64_t dk, int64_t hv, int64_t dv);

// RMSNorm with the one_plus or plain weight on rows [rows, d] and RoPE on [T, H, D] (the first 2 half dims of
// each head) on tracked values, so an op made of them composes them.
std::vector<Tracked> rms_norm_one_plus_reference(const std::vector<Tracked>& x, const std::vector<Tracked>& w,
                                                     int64_t d, double eps);
// 1 / sqrt(fp32 sum(x^2) / d + eps) of row r of x [rows, d] in fp32 steps (sq: d values of scratch).
Tracked inv_rms_reference(const std::vector<Tracked>& x, int64_t r, int64_t d, double eps, std::vector<Tracked>& sq);
std::vector<Tracked> rms_norm_plain_reference(const std::vector<Tracked>& x, const std::vector<Tracked>& w, int64_t d,
                                              double eps);
std::vector<Tracked> rope_reference(const std::vector<Tracked>& x, int64_t H, int64_t D,
                                            const std::vector<Tracked>& cs, const std::vector<Tracked>& sn, int64_t half,
                                            const SeqOffsets& o);

// conv2d (conv2d.cpp) and group_norm (group_norm.cpp) on tracked values, so an op made of both composes them:
// x [ci, h, w], w [co, ci, kh, kw], bias [co], residual [co, ho, wo] or null; split_inputs: CUDA's bf16 hi + lo
// activations. group_norm_tracked: x [c, per_channel], gamma, beta [c].
std::vector<Tracked> conv2d_tracked(const std::vector<Tracked>& x, const Shape& xs, const std::vector<Tracked>& w,
                                    const Shape& ws, const std::vector<Tracked>& bias, const std::vector<Tracked>* residual,
                                    const Conv2dGeometry& g, int64_t ho, int64_t wo, bool split_inputs);
std::vector<Tracked> group_norm_tracked(const std::vector<Tracked>& x, int64_t c, int64_t per_channel, int groups,
                                        double eps, bool silu, const std::vector<Tracked>& gamma,
                                        const std::vector<Tracked>& beta);

// SiTU(u, g) = bf16(((4 tanh(g / 4)) sigmoid(g)) (25 tanh(u / 25))) in fp32 on tracked values, and on the host
// with a fault for controls: 0 none, 1 each step rounded to bf16 as the official eager ops round, 2 the bound
// 25 dropped (tanh(u) plain), 3 up and gate swapped (modulation.cpp).
Tracked situ_reference(const Tracked& u, const Tracked& g);
double situ_faulty(float u, float g, int fault);

// Packed sequences travel in a case's params from index `from` on (as cu_seqlens).
SeqOffsets offsets_from(const Params& p, size_t from);
void append_offsets(Params& p, const SeqOffsets& o);
std::string offsets_label(const SeqOffsets& o);

// An attention case whose keys repeat every 8 values (the first key's head_dim 8 row), so the
// softmax is flat: a sloppy sum shows. Case inputs are q, k, v; the label says so.
Case with_equal_keys(Case c);

}  // namespace tf::contract
