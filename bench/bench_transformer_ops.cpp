// Times each op of a MOSS-Image joint block on CUDA alone at the released geometry (dim 3072, 24
// heads of 128, ffn 8192; random inputs), with its FLOP or byte count, so a forward's time can be
// split by op and set against the bf16 matrix rate measured in the same run (a cuBLASLt 8192^3
// product). Usage: bench_transformer_ops [tokens ...]   (default 4196; A+B packs samples, as a
// guidance step does).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef TF_HAVE_CUDA
#include "backend/attention/attention.h"
#include "backend/attention/qkv_norm_rope.h"
#include "backend/cuda/runtime/check.h"
#include "backend/cuda/runtime/runtime.h"
#include "backend/elementwise/residual_add.h"
#include "backend/elementwise/situ_gated_product.h"
#include "backend/linear/linear.h"
#include "backend/linear/linear_gated_product.h"
#include "backend/norm/rms_norm_modulate.h"
#include "backend/variants.h"
#include "check/random_tensor.h"

namespace {

using namespace tf;

constexpr int64_t kDim = 3072, kHeads = 24, kHeadDim = 128, kFfn = 8192, kLayers = 42;

Tensor rnd(Shape s, uint32_t seed, float scale = 1.0f) {
  return to_device(check::random_normal_tensor(DType::BF16, std::move(s), seed, scale), Device::CUDA);
}
Tensor dev(Shape s) { return empty(DType::BF16, std::move(s), Device::CUDA); }

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

// The bf16 matrix rate: a square cuBLASLt product of 8192, TFLOP/s.
double matrix_rate() {
  const int64_t n = 8192;
  Tensor x = rnd({n, n}, 1, 0.01f), w = rnd({n, n}, 2, 0.01f), y = dev({n, n});
  variants::Override lt(Variant::gemm, "cublaslt");
  const double us = median_us([&] { linear(x, w, y); }, 15);
  return 2.0 * n * n * n / us / 1e6;
}

void bench(const SeqOffsets& offs, const std::string& label, double rate) {
  const int64_t T = offs.back(), D = kDim, H = kHeads, d = kHeadDim, F = kFfn;
  double total_us = 0;
  auto line = [&](const char* name, double us, double flops, double bytes) {
    total_us += us;
    const double tf = flops / us / 1e6;
    std::printf("T=%-10s %-34s %9.1f us  x42 = %7.2f ms", label.c_str(), name, us, us * kLayers / 1e3);
    if (flops > 0) std::printf("  %6.1f TFLOP/s (%4.1f%% of rate)", tf, 100 * tf / rate);
    if (bytes > 0) std::printf("  %7.1f GB/s", bytes / us / 1e3);
    std::printf("\n");
  };
  auto gemm = [&](const char* name, const Tensor& x, const Tensor& w, Tensor& y, const Tensor* bias = nullptr) {
    const double us = median_us([&] { linear(x, w, y, {.bias = bias}); }, 10);
    line(name, us, 2.0 * x.dim(0) * x.dim(1) * w.dim(0), 0);
  };
  Tensor x = rnd({T, D}, 3), nw = rnd({D}, 4, 0.1f), shift = rnd({D}, 5, 0.3f), scale = rnd({D}, 6, 0.3f), y = dev({T, D});
  line("rms_norm_modulate", median_us([&] { rms_norm_modulate(x, nw, 1e-6f, shift, scale, y); }, 10), 0, 4.0 * T * D);
  Tensor wqkv = rnd({3 * D, D}, 7, 0.02f), qkv = dev({T, 3 * D});
  gemm("q|k|v product", y, wqkv, qkv);
  Tensor qn = rnd({d}, 8, 0.1f), kn = rnd({d}, 9, 0.1f), cs = to_device(check::random_normal_tensor(DType::F32, {T, d / 2}, 10, 0.5f), Device::CUDA),
         sn = to_device(check::random_normal_tensor(DType::F32, {T, d / 2}, 11, 0.5f), Device::CUDA);
  Tensor q = dev({T, H, d}), k = dev({T, H, d}), v = dev({T, H, d});
  line("qkv_norm_rope", median_us([&] { qkv_norm_rope(qkv, qn, kn, 1e-6f, {cs, sn}, q, k, v); }, 10), 0, 12.0 * T * D);
  Tensor o = dev({T, H, d});
  double attn_flops = 0;
  for (size_t s = 0; s + 1 < offs.size(); ++s) attn_flops += 4.0 * double(offs[s + 1] - offs[s]) * (offs[s + 1] - offs[s]) * D;
  const AttentionOptions ao{.scale = 0.0884f, .mask = AttentionMask::none, .sequences = offs,
                            .numerics = AttentionNumerics::fused};
  line("attention (fused, flash)", median_us([&] { attention(q, k, v, ao, o); }, 10), attn_flops, 0);
  Tensor wo = rnd({D, D}, 12, 0.02f), po = dev({T, D}), gate = rnd({D}, 13, 0.3f);
  const Tensor o2 = o.reshaped({T, D});
  gemm("o product", o2, wo, po);
  line("residual_add (gated)", median_us([&] { residual_add(x, po, &gate); }, 10), 0, 6.0 * T * D);
  Tensor wug = rnd({2 * F, D}, 14, 0.02f), ug = dev({T, 2 * F});
  gemm("up|gate product", y, wug, ug);
  Tensor up = rnd({T, F}, 15), gt = rnd({T, F}, 16), s = dev({T, F});
  line("situ_gated_product", median_us([&] { situ_gated_product(up, gt, s); }, 10), 0, 6.0 * T * F);
  Tensor wd = rnd({D, F}, 17, 0.01f), pd = dev({T, D});
  gemm("down product", s, wd, pd);
  line("residual_add (gated)", median_us([&] { residual_add(x, pd, &gate); }, 10), 0, 6.0 * T * D);
  std::printf("T=%-10s one joint block's ops: %.1f us, x42 = %.2f ms\n", label.c_str(), total_us, total_us * kLayers / 1e3);
  // The same block with the steps after the o, up|gate and down products in our wgmma kernel's epilogue
  // (TF_LINEAR_EPILOGUE=fused), and each of those products plain on that kernel (TF_GEMM=wgmma).
  const double separate_us = total_us;
  double products_us = 0;
  {
    variants::Override own(Variant::gemm, "wgmma");
    total_us = 0;
    gemm("q|k|v product (wgmma)", y, wqkv, qkv);
    gemm("o product (wgmma)", o2, wo, po);
    gemm("up|gate product (wgmma)", y, wug, ug);
    gemm("down product (wgmma)", s, wd, pd);
    products_us = total_us;
  }
  {
    variants::Override fused(Variant::linear_epilogue, "fused");
    total_us = 0;
    const double ffn = 2.0 * T * D * 2 * F, od = 2.0 * T * D * D, dd = 2.0 * T * F * D;
    line("o product + gated residual (fused)", median_us([&] { linear(o2, wo, {.residual = &x, .gate = &gate}); }, 10), od, 0);
    const Tensor wu = wug.rows(0, F), wg = wug.rows(F, 2 * F);
    line("up|gate product + SiTU (fused)",
         median_us([&] { linear_gated_product(y, wg, wu, GatedActivation::situ, s); }, 10), ffn, 0);
    line("down product + gated residual (fused)", median_us([&] { linear(s, wd, {.residual = &x, .gate = &gate}); }, 10), dd, 0);
    const double fused_us = total_us;
    std::printf("T=%-10s the four wgmma products: %.1f us; the three fused: %.1f us (the whole separate block: %.1f us)\n",
                label.c_str(), products_us, fused_us, separate_us);
  }
  // The block as the transformer runs it: its input norm, q|k|v, qkv_norm_rope, attention, o, the gated
  // add with norm2 in one pass, up|gate with SiTU in its epilogue, down with the gated add in its epilogue.
  {
    total_us = 0;
    Tensor y2 = dev({T, D});
    line("rms_norm_modulate", median_us([&] { rms_norm_modulate(x, nw, 1e-6f, shift, scale, y); }, 10), 0, 4.0 * T * D);
    gemm("q|k|v product", y, wqkv, qkv);
    line("qkv_norm_rope", median_us([&] { qkv_norm_rope(qkv, qn, kn, 1e-6f, {cs, sn}, q, k, v); }, 10), 0, 12.0 * T * D);
    line("attention (fused, flash)", median_us([&] { attention(q, k, v, ao, o); }, 10), attn_flops, 0);
    gemm("o product", o2, wo, po);
    line("residual_add_rms_norm_modulate",
         median_us([&] { residual_add_rms_norm_modulate(x, po, gate, nw, 1e-6f, shift, scale, y2); }, 10), 0, 8.0 * T * D);
    const Tensor wu = wug.rows(0, F), wg = wug.rows(F, 2 * F);
    line("up|gate product + SiTU (fused)",
         median_us([&] { linear_gated_product(y, wg, wu, GatedActivation::situ, s); }, 10), 2.0 * T * D * 2 * F, 0);
    line("down product + gated residual (fused)", median_us([&] { linear(s, wd, {.residual = &x, .gate = &gate}); }, 10),
         2.0 * T * F * D, 0);
    std::printf("T=%-10s the block as it runs: %.1f us, x42 = %.2f ms\n", label.c_str(), total_us, total_us * kLayers / 1e3);
  }
  Tensor b = rnd({3 * D}, 18, 0.1f);
  gemm("q|k|v product with bias (text's form)", y, wqkv, qkv, &b);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) args = {"4196"};
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
    const double rate = matrix_rate();
    std::printf("bf16 matrix rate (cuBLASLt 8192^3): %.1f TFLOP/s\n", rate);
    for (size_t i = 0; i < packs.size(); ++i) bench(packs[i], args[i], rate);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_transformer_ops: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
#else
int main() {
  std::printf("bench_transformer_ops: built without CUDA\n");
  return 0;
}
#endif
