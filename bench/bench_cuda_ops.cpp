// Times each encoder op's CUDA kernel alone at the released geometry (random inputs), so a whole
// forward's time can be split by op. Usage: bench_cuda_ops [tokens ...]   (default 75 4096)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#ifdef TF_HAVE_CUDA
#include "backend/attention_causal_gqa.h"
#include "backend/causal_conv1d_silu.h"
#include "backend/cuda/check.h"
#include "backend/cuda/runtime.h"
#include "backend/delta_net_prep.h"
#include "backend/gated_delta_rule.h"
#include "backend/rms_norm_gated.h"
#include "backend/rms_norm_zero_centred.h"
#include "backend/rope_partial.h"
#include "backend/rope_tables.h"
#include "backend/sigmoid_gate.h"
#include "backend/silu_gated_product.h"
#include "backend/split_query_gate.h"
#include "check/random_tensor.h"
#include "core/bf16.h"

namespace {

using namespace tf;

Tensor rnd(DType dt, Shape s, uint32_t seed, float scale = 1.0f) {
  return to_device(check::random_normal_tensor(dt, std::move(s), seed, scale), Device::CUDA);
}
Tensor dev(DType dt, Shape s) { return empty(dt, std::move(s), Device::CUDA); }

double median_us(const std::function<void()>& f, int reps) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  f();
  cuda::synchronize();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    cudaEventRecord(a, cuda::stream());
    f();
    cudaEventRecord(b, cuda::stream());
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1e3);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void bench(int64_t T) {
  const int64_t H = 4096, Hk = 16, dk = 128, Hv = 32, dv = 128, C = 2 * Hk * dk + Hv * dv, Hq = 16, Hkv = 4, hd = 256;
  const SeqOffsets offs = {0, T};
  const int reps = T > 1024 ? 5 : 20;
  auto line = [&](const char* name, double us, int per_forward) {
    std::printf("T=%-5ld %-28s %10.1f us  x%-2d = %8.3f ms per forward\n", long(T), name, us, per_forward,
                us * per_forward / 1e3);
  };
  // DeltaNet layer pieces (24 per forward)
  Tensor mixed = rnd(DType::BF16, {T, C}, 1), w = rnd(DType::BF16, {C, 1, 4}, 2, 0.5f), conv = dev(DType::BF16, {T, C});
  line("causal_conv1d_silu", median_us([&] { causal_conv1d_silu(mixed, w, offs, conv); }, reps), 24);
  Tensor b = rnd(DType::BF16, {T, Hv}, 3), a = rnd(DType::BF16, {T, Hv}, 4), A_log = rnd(DType::F32, {Hv}, 5, 0.5f),
         dt = rnd(DType::BF16, {Hv}, 6);
  Tensor q = dev(DType::F32, {T, Hk, dk}), k = dev(DType::F32, {T, Hk, dk}), v = dev(DType::F32, {T, Hv, dv}),
         beta = dev(DType::F32, {T, Hv}), g = dev(DType::F32, {T, Hv});
  line("delta_net_prep", median_us([&] { delta_net_prep(conv, b, a, A_log, dt, q, k, v, beta, g); }, reps), 24);
  Tensor o = dev(DType::BF16, {T, Hv, dv});
  line("gated_delta_rule", median_us([&] { gated_delta_rule(q, k, v, beta, g, offs, o); }, reps), 24);
  // both forms of the rule on the same inputs, whichever the dispatch would pick
  setenv("TF_DELTA_RULE", "recurrent", 1);
  line("  recurrent form", median_us([&] { gated_delta_rule(q, k, v, beta, g, offs, o); }, std::max(reps, 11)), 24);
  unsetenv("TF_DELTA_RULE");
  line("  chunked form", median_us([&] { gated_delta_rule_chunked(q, k, v, beta, g, offs, o); }, std::max(reps, 11)), 24);
  Tensor z = rnd(DType::BF16, {T * Hv, dv}, 7), gw = rnd(DType::F32, {dv}, 8), gy = dev(DType::BF16, {T * Hv, dv});
  line("rms_norm_gated", median_us([&] { rms_norm_gated(o.reshaped({T * Hv, dv}), z, gw, 1e-6f, gy); }, reps), 24);
  // every layer
  Tensor h = rnd(DType::BF16, {T, H}, 9), d = rnd(DType::BF16, {T, H}, 10), nw = rnd(DType::BF16, {H}, 11, 0.2f),
         ny = dev(DType::BF16, {T, H});
  line("residual_add_rms_norm", median_us([&] { residual_add_rms_norm_zero_centred(h, d, nw, 1e-6f, ny); }, reps), 64);
  Tensor gate = rnd(DType::BF16, {T, 12288}, 12), up = rnd(DType::BF16, {T, 12288}, 13), act = dev(DType::BF16, {T, 12288});
  line("silu_gated_product", median_us([&] { silu_gated_product(gate, up, act); }, reps), 32);
  // attention layer pieces (8 per forward)
  Tensor qg = rnd(DType::BF16, {T, Hq * 2 * hd}, 14), qq = dev(DType::BF16, {T, Hq, hd}), gg = dev(DType::BF16, {T, Hq, hd});
  line("split_query_gate", median_us([&] { split_query_gate(qg, qq, gg); }, reps), 8);
  Tensor qnw = rnd(DType::BF16, {hd}, 15, 0.2f), qn = dev(DType::BF16, {T * Hq, hd});
  line("rms_norm (q heads)", median_us([&] { rms_norm_zero_centred(qq.reshaped({T * Hq, hd}), qnw, 1e-6f, qn); }, reps), 8);
  RopeTables rt = make_rope_tables(T, 64, 1e7);
  Tensor cs = to_device(rt.cos, Device::CUDA), sn = to_device(rt.sin, Device::CUDA);
  Tensor qr = dev(DType::BF16, {T, Hq, hd});
  line("rope_partial (q)", median_us([&] { rope_partial(qq, cs, sn, offs, qr); }, reps), 8);
  Tensor kk = rnd(DType::BF16, {T, Hkv, hd}, 16), vv = rnd(DType::BF16, {T, Hkv, hd}, 17), ao = dev(DType::BF16, {T, Hq, hd});
  line("attention_causal_gqa", median_us([&] { attention_causal_gqa(qq, kk, vv, 0.0625f, offs, ao); }, reps), 8);
  line("sigmoid_gate", median_us([&] { sigmoid_gate(ao, gg, ao); }, reps), 8);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    cuda::init_runtime();
    std::printf("%s\n", cuda::device_description().c_str());
    std::vector<int64_t> ts;
    for (int i = 1; i < argc; ++i) ts.push_back(std::atoll(argv[i]));
    if (ts.empty()) ts = {75, 4096};
    for (int64_t t : ts) bench(t);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda_ops: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
#else
int main() {
  std::printf("bench_cuda_ops: built without CUDA\n");
  return 0;
}
#endif
