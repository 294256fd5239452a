// CPU convolution, GroupNorm and attention at FLUX.2 VAE shapes (one 3x3 conv of 128 or 512
// channels, the mid-block attention), in GFLOP/s; run with TF_THREADS to pick the thread count.
#include <benchmark/benchmark.h>

#include "backend/attention/attention.h"
#include "backend/conv/conv2d.h"
#include "backend/norm/group_norm.h"
#include "check/random_tensor.h"
#include "core/bf16.h"

namespace {

tf::Tensor filled(tf::DType t, tf::Shape s) { return tf::check::random_normal_tensor(t, std::move(s), 1, 0.1f); }

void BM_Conv3x3(benchmark::State& st) {
  const int64_t c = st.range(0), hw = st.range(1);
  const tf::Tensor x = filled(tf::DType::F32, {c, hw, hw}), w = filled(tf::DType::BF16, {c, c, 3, 3}),
                   b = filled(tf::DType::BF16, {c});
  tf::Tensor y = tf::empty(tf::DType::F32, {c, hw, hw});
  for (auto _ : st) tf::conv2d(x, w, b, {}, y);
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * c * c * 9 * hw * hw, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Conv3x3)->Args({128, 128})->Args({512, 32})->Unit(benchmark::kMillisecond);

void BM_GroupNormSilu(benchmark::State& st) {
  const int64_t c = st.range(0), hw = st.range(1);
  const tf::Tensor x = filled(tf::DType::F32, {c, hw, hw}), g = filled(tf::DType::BF16, {c}), b = filled(tf::DType::BF16, {c});
  tf::Tensor y = tf::empty(tf::DType::F32, {c, hw, hw});
  for (auto _ : st) tf::group_norm(x, g, b, 32, 1e-6f, st.range(2) != 0, y);
  st.SetBytesProcessed(st.iterations() * x.nbytes() * 3);
}
BENCHMARK(BM_GroupNormSilu)->Args({128, 256, 1})->Args({128, 256, 0})->Unit(benchmark::kMillisecond);

void BM_Attention(benchmark::State& st) {
  const int64_t d = 512, n = st.range(0);
  const tf::Tensor q = filled(tf::DType::F32, {d, n}), k = filled(tf::DType::F32, {d, n}), v = filled(tf::DType::F32, {d, n});
  tf::Tensor o = tf::empty(tf::DType::F32, {d, n});
  for (auto _ : st) tf::attention(q, k, v, {.scale = 0.0442f, .mask = tf::AttentionMask::none, .layout = tf::AttentionLayout::channels}, o);
  st.counters["GFLOP/s"] = benchmark::Counter(4.0 * d * n * n, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Attention)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
