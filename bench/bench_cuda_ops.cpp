// Times each encoder op's CUDA kernel alone at the released geometry (random inputs), so a whole
// forward's time can be split by op. Usage: bench_cuda_ops [tokens ...]   (default 75 4096); tokens
// A+B+... packs sequences into one pass, as a prompt pair is.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef TF_HAVE_CUDA
#include "backend/attention/attention.h"
#include "backend/conv/causal_conv1d_silu.h"
#include "backend/cuda/runtime/check.h"
#include "backend/cuda/runtime/runtime.h"
#include "backend/delta_rule/delta_net_prep.h"
#include "backend/delta_rule/gated_delta_rule.h"
#include "backend/norm/rms_norm_gated.h"
#include "backend/norm/rms_norm.h"
#include "backend/rope/rope.h"
#include "backend/rope/rope_tables.h"
#include "backend/elementwise/sigmoid_gate.h"
#include "backend/elementwise/silu_gated_product.h"
#include "backend/attention/split_query_gate.h"
#include "backend/variants.h"
#include "check/random_tensor.h"
#include "core/bytes_hash.h"
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

void bench(const SeqOffsets& offs, const std::string& label) {
  const int64_t T = offs.back();
  const int64_t H = 4096, Hk = 16, dk = 128, Hv = 32, dv = 128, C = 2 * Hk * dk + Hv * dv, Hq = 16, Hkv = 4, hd = 256;
  const int reps = T > 1024 ? 5 : 20;
  // the output's bytes as a hash, so two builds' kernels can be compared byte for byte
  auto line = [&](const char* name, double us, int per_forward, const Tensor& out) {
    Tensor host = to_device(out, Device::CPU);
    const uint64_t hash = bytes_hash(host.data, host.nbytes());
    std::printf("T=%-6s %-28s %10.1f us  x%-2d = %8.3f ms per forward  out %016llx\n", label.c_str(), name, us, per_forward,
                us * per_forward / 1e3, static_cast<unsigned long long>(hash));
  };
  // one op: timed (median of `r` launches, `reps` by default), then its output hashed
  auto op = [&](const char* name, int per_forward, const Tensor& out, const std::function<void()>& f, int r = 0) {
    line(name, median_us(f, r ? r : reps), per_forward, out);
  };
  // DeltaNet layer pieces (24 per forward)
  Tensor mixed = rnd(DType::BF16, {T, C}, 1), w = rnd(DType::BF16, {C, 1, 4}, 2, 0.5f), conv = dev(DType::BF16, {T, C});
  op("causal_conv1d_silu", 24, conv, [&] { causal_conv1d_silu(mixed, w, offs, conv); });
  Tensor b = rnd(DType::BF16, {T, Hv}, 3), a = rnd(DType::BF16, {T, Hv}, 4), A_log = rnd(DType::F32, {Hv}, 5, 0.5f),
         dt = rnd(DType::BF16, {Hv}, 6);
  Tensor q = dev(DType::F32, {T, Hk, dk}), k = dev(DType::F32, {T, Hk, dk}), v = dev(DType::F32, {T, Hv, dv}),
         beta = dev(DType::F32, {T, Hv}), g = dev(DType::F32, {T, Hv});
  op("delta_net_prep", 24, q, [&] { delta_net_prep(conv, b, a, A_log, dt, q, k, v, beta, g); });
  Tensor o = dev(DType::BF16, {T, Hv, dv});
  op("gated_delta_rule", 24, o, [&] { gated_delta_rule(q, k, v, beta, g, offs, o); });
  // both forms of the rule on the same inputs, whichever the dispatch would pick
  {
    variants::Override recurrent(Variant::delta_rule, "recurrent");
    op("  recurrent form", 24, o, [&] { gated_delta_rule(q, k, v, beta, g, offs, o); }, std::max(reps, 11));
  }
  op("  chunked form", 24, o, [&] { gated_delta_rule_chunked(q, k, v, beta, g, offs, o); }, std::max(reps, 11));
  Tensor z = rnd(DType::BF16, {T * Hv, dv}, 7), gw = rnd(DType::F32, {dv}, 8), gy = dev(DType::BF16, {T * Hv, dv});
  op("rms_norm_gated", 24, gy, [&] { rms_norm_gated(o.reshaped({T * Hv, dv}), z, gw, 1e-6f, gy); });
  // every layer
  Tensor h = rnd(DType::BF16, {T, H}, 9), d = rnd(DType::BF16, {T, H}, 10), nw = rnd(DType::BF16, {H}, 11, 0.2f),
         ny = dev(DType::BF16, {T, H});
  op("residual_add_rms_norm", 64, ny, [&] { residual_add_rms_norm(h, d, nw, {NormWeight::one_plus, 1e-6f}, ny); });
  Tensor gate = rnd(DType::BF16, {T, 12288}, 12), up = rnd(DType::BF16, {T, 12288}, 13), act = dev(DType::BF16, {T, 12288});
  op("silu_gated_product", 32, act, [&] { silu_gated_product(gate, up, act); });
  // attention layer pieces (8 per forward)
  Tensor qg = rnd(DType::BF16, {T, Hq * 2 * hd}, 14), qq = dev(DType::BF16, {T, Hq, hd}), gg = dev(DType::BF16, {T, Hq, hd});
  op("split_query_gate", 8, gg, [&] { split_query_gate(qg, qq, gg); });
  Tensor qnw = rnd(DType::BF16, {hd}, 15, 0.2f), qn = dev(DType::BF16, {T * Hq, hd});
  op("rms_norm (q heads)", 8, qn, [&] { rms_norm(qq.reshaped({T * Hq, hd}), qnw, {NormWeight::one_plus, 1e-6f}, qn); });
  RopeTables rt = make_rope_tables(T, 64, 1e7);
  Tensor cs = to_device(rt.cos, Device::CUDA), sn = to_device(rt.sin, Device::CUDA);
  Tensor qr = dev(DType::BF16, {T, Hq, hd});
  op("rope (q, 64 of 256 dims)", 8, qr, [&] { rope(qq, {cs, sn}, RopePositions::sequential(offs), qr); });
  Tensor kk = rnd(DType::BF16, {T, Hkv, hd}, 16), vv = rnd(DType::BF16, {T, Hkv, hd}, 17), ao = dev(DType::BF16, {T, Hq, hd});
  op("attention (causal, 16:4 heads)", 8, ao, [&] { attention(qq, kk, vv, {.scale = 0.0625f, .sequences = offs}, ao); });
  op("sigmoid_gate", 8, ao, [&] { sigmoid_gate(ao, gg, ao); });
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // every argument read before the GPU is touched, so a bad one fails at once
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) args = {"75", "4096"};
    std::vector<SeqOffsets> packs;
    for (const std::string& a : args) {
      SeqOffsets offs = {0};
      for (size_t at = 0; at <= a.size();) {
        const size_t plus = std::min(a.find('+', at), a.size());
        int64_t n = 0;
        const auto [end, err] = std::from_chars(a.data() + at, a.data() + plus, n);
        if (err != std::errc() || end != a.data() + plus || n <= 0 || n > (int64_t(1) << 20))
          throw std::runtime_error("'" + a + "' is not a token count or A+B+... (counts 1 .. 1048576)");
        offs.push_back(offs.back() + n);
        at = plus + 1;
      }
      packs.push_back(offs);
    }
    cuda::init_runtime();
    std::printf("%s\n", cuda::device_description().c_str());
    for (size_t i = 0; i < packs.size(); ++i) bench(packs[i], args[i]);
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
