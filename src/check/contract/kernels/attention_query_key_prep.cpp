// attention_query_key_prep: query and gate split from qg (exact copies), then q = rope(norm(query,
// q_norm)) and k = rope(norm(kraw, k_norm)) with rms_norm_zero_centred's and rope_partial's
// rounding points.
#include "backend/attention/attention_query_key_prep.h"
#include "backend/attention/split_query_gate.h"
#include "backend/norm/rms_norm.h"
#include "backend/rope/rope.h"
#include "backend/rope/rope_tables.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// params: eps, offsets. inputs: qg, kraw, q_norm, k_norm, cos, sin. outputs: q, k, gate.
Case make_case(Rng& rng, int64_t hq, int64_t hkv, int64_t d, int64_t half, const SeqOffsets& o, DType wt) {
  const int64_t T = o.back();
  RopeTables rt = make_rope_tables(std::max<int64_t>(T, 1), 2 * half, 1e7);
  Case c;
  c.label = label({{"tokens", T}, {"hq", hq}, {"hkv", hkv}, {"head_dim", d}, {"rotary", 2 * half}}) + " " +
            offsets_label(o) + (wt == DType::F32 ? " w=F32" : "");
  c.inputs = {random_normal(rng, DType::BF16, {T, hq * 2 * d}, 2.0), random_normal(rng, DType::BF16, {T, hkv * d}, 0.5),
              random_normal(rng, wt, {d}, 0.3), random_normal(rng, wt, {d}, 0.3), rt.cos, rt.sin};
  c.outputs = {host_empty(DType::BF16, {T, hq, d}), host_empty(DType::BF16, {T, hkv, d}), host_empty(DType::BF16, {T, hq, d})};
  c.params = {1e-6};
  append_offsets(c.params, o);
  return c;
}

Reference reference(const Case& c) {
  const int64_t T = c.outputs[0].dim(0), hq = c.outputs[0].dim(1), hkv = c.outputs[1].dim(1), d = c.outputs[0].dim(2);
  const int64_t half = c.inputs[4].dim(1);
  const SeqOffsets o = offsets_from(c.params, 1);
  std::vector<Tracked> qg = tracked_of(c.inputs[0]), query(static_cast<size_t>(T * hq * d)), gate(query.size());
  for (int64_t r = 0; r < T * hq; ++r)
    for (int64_t i = 0; i < d; ++i) {
      query[r * d + i] = qg[r * 2 * d + i];
      gate[r * d + i] = qg[r * 2 * d + d + i];
    }
  const std::vector<Tracked> cs = tracked_of(c.inputs[4]), sn = tracked_of(c.inputs[5]);
  std::vector<Tracked> q = rms_norm_one_plus_reference(query, tracked_of(c.inputs[2]), d, c.params[0]);
  std::vector<Tracked> k = rms_norm_one_plus_reference(tracked_of(c.inputs[1]), tracked_of(c.inputs[3]), d, c.params[0]);
  return {rope_reference(q, hq, d, cs, sn, half, o), rope_reference(k, hkv, d, cs, sn, half, o), gate};
}

// The op on the host with a fault: `keys_with_query_weights` normalises the keys with q_norm,
// `rope_before_norm` rotates the raw query and keys and normalises after.
void faulty(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, bool keys_with_query_weights,
            bool rope_before_norm) {
  const float eps = static_cast<float>(p[0]);
  const SeqOffsets o = offsets_from(p, 1);
  const int64_t T = out[0].dim(0), hq = out[0].dim(1), hkv = out[1].dim(1), d = out[0].dim(2);
  const Tensor& kn = keys_with_query_weights ? in[2] : in[3];
  if (!rope_before_norm) return cpu::attention_query_key_prep(in[0], in[1], in[2], kn, eps, in[4], in[5], o, out[0], out[1], out[2]);
  Tensor query = empty(DType::BF16, out[0].shape), kraw = in[1].reshaped({T, hkv, d});
  Tensor q_rot = empty(DType::BF16, out[0].shape), k_rot = empty(DType::BF16, out[1].shape);
  cpu::split_query_gate(in[0], query, out[2]);
  cpu::rope_split_half(query, in[4], in[5], o, q_rot);
  cpu::rope_split_half(kraw, in[4], in[5], o, k_rot);
  Tensor q_rows = out[0].reshaped({T * hq, d}), k_rows = out[1].reshaped({T * hkv, d});
  cpu::rms_norm_one_plus(q_rot.reshaped({T * hq, d}), in[2], eps, q_rows);
  cpu::rms_norm_one_plus(k_rot.reshaped({T * hkv, d}), kn, eps, k_rows);
}

}  // namespace

void register_attention_query_key_prep(bool cuda) {
  KernelContract k;
  k.name = "attention_query_key_prep";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    // CUDA: head dims 256 and 512 with 2 half <= 256 in eights take the one-launch kernel; 64 the steps
    return std::vector<Case>{make_case(rng, 4, 2, 256, 32, {0, 5, 9}, DType::BF16),
                             make_case(rng, 2, 1, 512, 64, {0, 3}, DType::F32),
                             make_case(rng, 4, 1, 64, 8, {0, 0, 7}, DType::BF16)};
  };
  k.reference = reference;
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    attention_query_key_prep(in[0], in[1], in[2], in[3], static_cast<float>(p[0]), in[4], in[5], offsets_from(p, 1),
                             out[0], out[1], out[2]);
  };
  k.controls = {
      reimplemented("keys-with-query-weights", [](auto& in, auto& out, auto& p) { faulty(in, out, p, true, false); }),
      reimplemented("rope-before-norm", [](auto& in, auto& out, auto& p) { faulty(in, out, p, false, true); }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = "tokens=4096 hq=16 hkv=4 head_dim=256 rotary=64";
    c.inputs = {shape_only(DType::BF16, {4096, 16 * 512}), shape_only(DType::BF16, {4096, 4 * 256}),
                shape_only(DType::BF16, {256}), shape_only(DType::BF16, {256}), shape_only(DType::BF16, {4096, 32}),
                shape_only(DType::BF16, {4096, 32})};
    c.outputs = {shape_only(DType::BF16, {4096, 16, 256}), shape_only(DType::BF16, {4096, 4, 256}),
                 shape_only(DType::BF16, {4096, 16, 256})};
    c.params = {1e-6};
    append_offsets(c.params, single_sequence(4096));
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
