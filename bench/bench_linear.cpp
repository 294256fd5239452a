// The CPU linear at the released encoder's shapes, in GFLOP/s against this machine's measured fp32
// FMA peak (registers only, the widest vector unit the linear uses). Rates are given per second of
// wall time and per second of CPU time summed over the threads (the second holds up on a busy
// shared machine, where wall time also counts other programs' turns).
//   bench_linear [--benchmark_filter=...]   (TF_THREADS sets the cores used)
#include <benchmark/benchmark.h>

#include <time.h>

#include <chrono>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backend/linear/linear.h"
#include "check/random_tensor.h"
#include "core/bf16.h"
#include "core/parallel.h"

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

tf::Tensor random_bf16(tf::Shape s, uint32_t seed) {
  return tf::check::random_normal_tensor(tf::DType::BF16, std::move(s), seed, 0.05f);
}

#if defined(__x86_64__)
// 24 independent FMA chains per core: enough to saturate two 512-bit FMA ports.
__attribute__((target("avx512f"))) double fma_peak_avx512(int64_t iters) {
  __m512 acc[24];
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(1.0f + i * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < 24; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  float sink = 0;
  for (int i = 0; i < 24; ++i) sink += _mm512_reduce_add_ps(acc[i]);
  benchmark::DoNotOptimize(sink);
  return 24.0 * 16 * 2 * iters;
}
__attribute__((target("avx2,fma"))) double fma_peak_avx2(int64_t iters) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(1.0f + i * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  alignas(32) float out[8];
  float sink = 0;
  for (int i = 0; i < 12; ++i) {
    _mm256_store_ps(out, acc[i]);
    sink += out[0];
  }
  benchmark::DoNotOptimize(sink);
  return 12.0 * 8 * 2 * iters;
}
#endif

double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Peak {
  double wall = 0;      // FLOP/s with every thread busy, per wall second
  double per_core = 0;  // FLOP/s per second of a thread's own CPU time
};

// Peak fp32 FMA throughput (measured once, reused by every linear benchmark).
const Peak& measured_peak() {
  static Peak peak = [] {
    const int64_t iters = 20'000'000;
    auto kernel = tf::cpu::linear_kernel_in_use();
    Peak best;
    for (int rep = 0; rep < 3; ++rep) {
      std::vector<double> flops(tf::thread_count(), 0), cpu(tf::thread_count(), 0);
      auto t0 = std::chrono::steady_clock::now();
      tf::parallel_for(tf::thread_count(), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          double c0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
#if defined(__x86_64__)
          if (kernel == tf::cpu::LinearKernel::Avx512) flops[i] = fma_peak_avx512(iters);
          else if (kernel == tf::cpu::LinearKernel::Avx2) flops[i] = fma_peak_avx2(iters);
#endif
          cpu[i] = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
        }
      });
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double total = 0, core = 0;
      for (size_t i = 0; i < flops.size(); ++i) {
        total += flops[i];
        if (cpu[i] > 0) core = std::max(core, flops[i] / cpu[i]);
      }
      best.wall = std::max(best.wall, total / s);
      best.per_core = std::max(best.per_core, core);
    }
    return best;
  }();
  return peak;
}

void BM_FmaPeak(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(measured_peak());
  state.counters["GFLOP/s"] = measured_peak().wall / 1e9;
  state.counters["GFLOP/s_per_core"] = measured_peak().per_core / 1e9;
  state.SetLabel(std::string(tf::cpu::linear_kernel_name(tf::cpu::linear_kernel_in_use())) + " FMA, " +
                 std::to_string(tf::thread_count()) + " threads");
}
BENCHMARK(BM_FmaPeak)->Iterations(1)->Unit(benchmark::kMillisecond);

// args: tokens, N (out), K (in)
void BM_Linear(benchmark::State& state) {
  const int64_t n = state.range(0), N = state.range(1), K = state.range(2);
  tf::Tensor x = random_bf16({n, K}, 1), w = random_bf16({N, K}, 2), y = tf::empty(tf::DType::BF16, {n, N});
  const Peak& peak = measured_peak();
  double cpu = 0;
  for (auto _ : state) {
    double c0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    tf::linear(x, w, y);
    benchmark::DoNotOptimize(y.data);
    cpu += cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
  }
  const double flop = 2.0 * n * N * K * state.iterations();
  state.counters["GFLOP/s"] = benchmark::Counter(flop / 1e9, benchmark::Counter::kIsRate);
  state.counters["of_peak"] = benchmark::Counter(flop / peak.wall, benchmark::Counter::kIsRate);
  state.counters["GFLOP/cpu_s"] = flop / cpu / 1e9;
  state.counters["of_core_peak"] = flop / cpu / peak.per_core;
  state.counters["weight_GB/s"] = benchmark::Counter(2.0 * N * K * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

// The released geometry's projections: q_proj and in_proj_qkv [8192, 4096], k/v_proj [1024, 4096],
// o_proj, in_proj_z, out_proj [4096, 4096], in_proj_b/a [32, 4096], gate/up [12288, 4096], down [4096, 12288].
void released_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {34, 256})
    for (auto [N, K] : std::vector<std::pair<int64_t, int64_t>>{
             {8192, 4096}, {1024, 4096}, {4096, 4096}, {32, 4096}, {12288, 4096}, {4096, 12288}})
      b->Args({n, N, K});
}
BENCHMARK(BM_Linear)->Apply(released_shapes)->ArgNames({"tokens", "N", "K"})->Unit(benchmark::kMillisecond)
    ->UseRealTime()->MinTime(0.5);

}  // namespace

BENCHMARK_MAIN();
