// Standalone check and timing of the VAE's CUDA kernels (no TensorFold runtime needed):
// each kernel against a float64 CPU reference on fresh random inputs (outputs poisoned with NaN
// first), then the FLUX.2 encoder/decoder op sequence timed with random weights.
// Build: nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a --fmad=false -Isrc \
//   bench/cuda/vae_kernels_check.cu src/backend/cuda/kernels/*/*_launch.cu src/backend/variants.cpp \
//   -o vae_kernels_check
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/kernels/channels_f32.h"
#include "backend/variants.h"

using bf16 = __nv_bfloat16;
using namespace tf::cuda;
using tf::Variant;
using tf::variants::Override;

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)

static std::mt19937_64 rng(12345);
static int failures = 0;

static float bf(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

static std::vector<float> randn(size_t n, float scale = 1.f, float offset = 0.f) {
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = offset + scale * d(rng);
  return v;
}
static std::vector<float> bf_round(std::vector<float> v) {
  for (auto& x : v) x = bf(x);
  return v;
}

template <class T>
static T* dev(const std::vector<T>& h) {
  T* p;
  CK(cudaMalloc(&p, h.size() * sizeof(T)));
  CK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}
static bf16* dev_bf(const std::vector<float>& h) {
  std::vector<bf16> b(h.size());
  for (size_t i = 0; i < h.size(); ++i) b[i] = __float2bfloat16_rn(h[i]);
  return dev(b);
}
static float* dev_poison(size_t n) {
  float* p;
  CK(cudaMalloc(&p, n * sizeof(float)));
  CK(cudaMemset(p, 0xff, n * sizeof(float)));  // NaN
  return p;
}
static std::vector<float> host(const float* p, size_t n) {
  std::vector<float> h(n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// Compares sampled outputs: relative L2 error and worst |err| / rms(ref); every output must be finite.
static void report(const char* name, const std::vector<float>& out, const std::vector<size_t>& idx,
                   const std::vector<double>& ref, double tol) {
  size_t nonfinite = 0;
  for (float v : out) nonfinite += !std::isfinite(v);
  double e2 = 0, r2 = 0, worst = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    const double d = double(out[idx[i]]) - ref[i];
    e2 += d * d;
    r2 += ref[i] * ref[i];
  }
  const double rms = std::sqrt(r2 / idx.size());
  for (size_t i = 0; i < idx.size(); ++i) worst = std::max(worst, std::fabs(double(out[idx[i]]) - ref[i]) / rms);
  const double rel = std::sqrt(e2 / r2);
  const bool ok = nonfinite == 0 && rel <= tol && worst <= 20 * tol;
  failures += !ok;
  std::printf("%-44s rel %.3e  worst/rms %.3e  unwritten/nonfinite %zu  %s\n", name, rel, worst, nonfinite,
              ok ? "PASS" : "FAIL");
}

static std::vector<size_t> sample(size_t n, size_t count) {
  std::vector<size_t> idx;
  if (n <= count) {
    for (size_t i = 0; i < n; ++i) idx.push_back(i);
    return idx;
  }
  std::uniform_int_distribution<size_t> d(0, n - 1);
  for (size_t i = 0; i < count; ++i) idx.push_back(d(rng));
  return idx;
}

static void check_conv(int Ci, int Co, int H, int W, int ks, int stride, bool up, bool res, int pt, int pl, int pb,
                       int pr) {
  ConvShape s{Ci, H, W, up, Co, ks, ks, stride, pt, pl, pb, pr, 0, 0};
  conv_output_size(s);
  auto x = randn(size_t(Ci) * H * W);
  auto w = bf_round(randn(size_t(Co) * Ci * ks * ks, 1.f / std::sqrt(float(Ci * ks * ks))));
  auto b = bf_round(randn(Co, 0.1f));
  const size_t ny = size_t(Co) * s.Ho * s.Wo;
  auto r = randn(ny);
  float *dx = dev(x), *dr = res ? dev(r) : nullptr, *dy = dev_poison(ny);
  bf16 *dw = dev_bf(w), *db = dev_bf(b);
  void* cws = nullptr;
  CK(cudaMalloc(&cws, conv_workspace_bytes(s) + 16));
  launch_conv2d(dx, dw, db, dr, dy, s, cws, 0);
  auto y = host(dy, ny);
  auto idx = sample(ny, 20000);
  std::vector<double> ref;
  const int Hl = up ? 2 * H : H, Wl = up ? 2 * W : W;
  for (size_t id : idx) {
    const int co = int(id / (size_t(s.Ho) * s.Wo));
    const int rem = int(id % (size_t(s.Ho) * s.Wo)), oy = rem / s.Wo, ox = rem % s.Wo;
    double acc = 0;
    for (int ci = 0; ci < Ci; ++ci)
      for (int ky = 0; ky < ks; ++ky)
        for (int kx = 0; kx < ks; ++kx) {
          const int iy = oy * stride - pt + ky, ix = ox * stride - pl + kx;
          if (iy < 0 || iy >= Hl || ix < 0 || ix >= Wl) continue;
          const int sy = up ? iy / 2 : iy, sx = up ? ix / 2 : ix;
          acc += double(w[((size_t(co) * Ci + ci) * ks + ky) * ks + kx]) * double(x[(size_t(ci) * H + sy) * W + sx]);
        }
    acc += b[co];
    if (res) acc += r[id];
    ref.push_back(acc);
  }
  char name[160];
  std::snprintf(name, sizeof name, "conv %dx%d s%d%s%s %d->%d %dx%d", ks, ks, stride, up ? " up" : "", res ? " +res" : "",
                Ci, Co, H, W);
  report(name, y, idx, ref, 1e-5);
  cudaFree(dx), cudaFree(dy), cudaFree(dw), cudaFree(db), cudaFree(cws);
  if (dr) cudaFree(dr);
}

static void check_group_norm(int C, int H, int W, bool silu, float offset, bool inplace) {
  const int G = 32;
  const size_t n = size_t(C) * H * W;
  auto x = randn(n, 1.f, offset);
  auto g = bf_round(randn(C, 0.5f, 1.f)), b = bf_round(randn(C, 0.2f));
  float* dx = dev(x);
  float* dy = inplace ? dx : dev_poison(n);
  bf16 *dg = dev_bf(g), *db = dev_bf(b);
  void* ws;
  CK(cudaMalloc(&ws, group_norm_workspace_bytes(C, int64_t(H) * W, G)));
  launch_group_norm(dx, dg, db, C, int64_t(H) * W, G, 1e-6f, silu, dy, ws, 0);
  auto y = host(dy, n);
  const size_t L = n / G;
  std::vector<double> mean(G), rstd(G);
  for (int gi = 0; gi < G; ++gi) {
    double s = 0;
    for (size_t i = 0; i < L; ++i) s += x[gi * L + i];
    const double m = s / L;
    double v = 0;
    for (size_t i = 0; i < L; ++i) v += (x[gi * L + i] - m) * (x[gi * L + i] - m);
    mean[gi] = m, rstd[gi] = 1 / std::sqrt(v / L + 1e-6);
  }
  auto idx = sample(n, 50000);
  std::vector<double> ref;
  for (size_t id : idx) {
    const int c = int(id / (size_t(H) * W)), gi = c / (C / G);
    double v = (x[id] - mean[gi]) * rstd[gi] * g[c] + b[c];
    if (silu) v = v / (1 + std::exp(-v));
    ref.push_back(v);
  }
  char name[160];
  std::snprintf(name, sizeof name, "group_norm%s%s C%d %dx%d mean %.0f", silu ? "+silu" : "", inplace ? " inplace" : "",
                C, H, W, offset);
  report(name, y, idx, ref, 1e-6);
  cudaFree(dx), cudaFree(dg), cudaFree(db), cudaFree(ws);
  if (!inplace) cudaFree(dy);
}

static void check_upsample(int C, int H, int W) {
  auto x = randn(size_t(C) * H * W);
  float *dx = dev(x), *dy = dev_poison(x.size() * 4);
  launch_upsample_nearest2x(dx, C, H, W, dy, 0);
  auto y = host(dy, x.size() * 4);
  std::vector<size_t> idx;
  std::vector<double> ref;
  for (size_t i = 0; i < y.size(); ++i) {
    const size_t c = i / (size_t(4) * H * W), rem = i % (size_t(4) * H * W), r = rem / (2 * W), col = rem % (2 * W);
    idx.push_back(i);
    ref.push_back(x[(c * H + r / 2) * W + col / 2]);
  }
  report("upsample_nearest2x", y, idx, ref, 0.0);
  cudaFree(dx), cudaFree(dy);
}

static void check_attention(int D, int N, float qscale) {
  auto q = randn(size_t(D) * N, qscale), k = randn(size_t(D) * N, qscale), v = randn(size_t(D) * N);
  float *dq = dev(q), *dk = dev(k), *dv = dev(v), *dout = dev_poison(size_t(D) * N), *ws;
  CK(cudaMalloc(&ws, attention_workspace_floats(D, N) * sizeof(float)));
  const float scale = 1.f / std::sqrt(float(D));
  launch_attention_single_head(dq, dk, dv, D, N, scale, dout, ws, 0);
  auto o = host(dout, size_t(D) * N);
  std::vector<size_t> idx;
  std::vector<double> ref;
  std::uniform_int_distribution<int> pick(0, N - 1);
  std::vector<double> p(N);
  for (int t = 0; t < 24; ++t) {
    const int i = t == 0 ? N - 1 : pick(rng);
    double m = -1e300;
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int d = 0; d < D; ++d) s += double(q[size_t(d) * N + i]) * k[size_t(d) * N + j];
      p[j] = s * double(scale);
      m = std::max(m, p[j]);
    }
    double z = 0;
    for (int j = 0; j < N; ++j) z += (p[j] = std::exp(p[j] - m));
    for (int d = 0; d < D; ++d) {
      double acc = 0;
      for (int j = 0; j < N; ++j) acc += p[j] * v[size_t(d) * N + j];
      idx.push_back(size_t(d) * N + i);
      ref.push_back(acc / z);
    }
  }
  char name[160];
  std::snprintf(name, sizeof name, "attention D%d N%d qk-scale %.1f", D, N, qscale);
  // the split's score error grows with |q.k|: 1e-5 at unit scale, allow 3e-5 for scores 3x larger
  report(name, o, idx, ref, qscale > 1.f ? 3e-5 : 1e-5);
  cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(dout), cudaFree(ws);
}

// Random device inputs of one conv shape (residual optional), for launches compared byte for byte.
struct ConvInputs {
  ConvShape s;
  size_t ny;
  float *x, *r;
  bf16 *w, *b;
  void* ws;
  ConvInputs(int Ci, int Co, int H, int W, int ks, int stride, bool up, bool res) {
    const int pad = ks == 3 ? 1 : 0;
    s = {Ci, H, W, up, Co, ks, ks, stride, stride == 2 ? 0 : pad, stride == 2 ? 0 : pad, pad, pad, 0, 0};
    conv_output_size(s);
    ny = size_t(Co) * s.Ho * s.Wo;
    x = dev(randn(size_t(Ci) * H * W));
    w = dev_bf(bf_round(randn(size_t(Co) * Ci * ks * ks, 0.05f)));
    b = dev_bf(bf_round(randn(Co, 0.1f)));
    r = res ? dev(randn(ny)) : nullptr;
    CK(cudaMalloc(&ws, conv_workspace_bytes(s) + 16));  // with the TMA kernel on: the largest
  }
  std::vector<float> run() {
    float* y = dev_poison(ny);
    launch_conv2d(x, w, b, r, y, s, ws, 0);
    auto out = host(y, ny);
    cudaFree(y);
    return out;
  }
  ~ConvInputs() {
    cudaFree(x), cudaFree(w), cudaFree(b), cudaFree(ws);
    if (r) cudaFree(r);
  }
};

static void report_identical(const char* what, const std::vector<float>& a, const std::vector<float>& c) {
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += std::memcmp(&a[i], &c[i], sizeof(float)) != 0;
  failures += differ != 0;
  std::printf("%s %s (%zu of %zu differ)\n", what, differ == 0 ? "byte-identical PASS" : "DIFFER FAIL", differ, a.size());
}

// The tile width must not change a single bit: each output's sum order is independent of it.
static void check_tiles_identical(int Ci, int Co, int H, int W, int ks, int stride, bool up) {
  ConvInputs in(Ci, Co, H, W, ks, stride, up, true);
  auto on_tile = [&](const char* tile) {
    Override o(Variant::conv_tile, tile);
    return in.run();
  };
  const auto a = on_tile("64"), c = on_tile("128");
  char what[120];
  std::snprintf(what, sizeof what, "conv %dx%d s%d%s %d->%d %dx%d: tile 64 and 128 outputs", ks, ks, stride,
                up ? " up" : "", Ci, Co, H, W);
  report_identical(what, a, c);
}

// The TMA-fed kernel must give conv_wgmma_kernel's bytes: same split, same K order, same MMAs.
static void check_tma_identical(int Ci, int Co, int H, int W, int ks, int stride, bool up, bool res) {
  Override wgmma(Variant::conv_kernel, "auto"), tma(Variant::split_operands, "auto");
  ConvInputs in(Ci, Co, H, W, ks, stride, up, res);
  const auto c = in.run();
  std::vector<float> a;
  {
    Override gather(Variant::split_operands, "gather");
    a = in.run();
  }
  char what[120];
  std::snprintf(what, sizeof what, "conv %dx%d s%d%s%s %d->%d %dx%d: TMA and gathering kernels", ks, ks, stride,
                up ? " up" : "", res ? " +res" : "", Ci, Co, H, W);
  report_identical(what, a, c);
}

// The attention with its operands split beforehand (TMA kernel) against splitting inside the products.
static void check_attention_tma_identical(int D, int N) {
  auto q = randn(size_t(D) * N), k = randn(size_t(D) * N), v = randn(size_t(D) * N);
  float *dq = dev(q), *dk = dev(k), *dv = dev(v), *o0 = dev_poison(size_t(D) * N), *o1 = dev_poison(size_t(D) * N), *ws;
  CK(cudaMalloc(&ws, attention_workspace_floats(D, N) * sizeof(float)));
  const float scale = 1.f / std::sqrt(float(D));
  Override wgmma(Variant::channels_attention_kernel, "wgmma"), tma(Variant::split_operands, "auto");
  launch_attention_single_head(dq, dk, dv, D, N, scale, o1, ws, 0);
  {
    Override gather(Variant::split_operands, "gather");
    launch_attention_single_head(dq, dk, dv, D, N, scale, o0, ws, 0);
  }
  char what[80];
  std::snprintf(what, sizeof what, "attention D%d N%d: TMA and gathering kernels", D, N);
  report_identical(what, host(o0, size_t(D) * N), host(o1, size_t(D) * N));
  cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(o0), cudaFree(o1), cudaFree(ws);
}

#include "vae_sequence.inc"

int main(int argc, char** argv) {
  // usage: vae_kernels_check [--no-timing] [--sizes 512,1024,2048] [--tiles 64,128]
  bool timing = true;
  std::vector<int> sizes{512, 1024, 2048}, tiles{64, 128};
  auto ints = [](const char* s) {
    std::vector<int> v;
    for (const char* p = s; *p;) {
      v.push_back(std::atoi(p));
      while (*p && *p != ',') ++p;
      if (*p == ',') ++p;
    }
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-timing")) timing = false;
    else if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = ints(argv[++i]);
    else if (!std::strcmp(argv[i], "--tiles") && i + 1 < argc) tiles = ints(argv[++i]);
  }
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // an abort must not eat what was already printed
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  for (bool wgmma : {true, false})
  for (int tile : tiles) {
  Override conv(Variant::conv_kernel, wgmma ? "auto" : "mma");
  Override attention(Variant::channels_attention_kernel, wgmma ? "wgmma" : "mma");
  Override tile_n(Variant::conv_tile, std::to_string(tile));
  std::printf("conv tile n = %d, %s\n", tile, wgmma ? "wgmma where the gather allows" : "mma.sync only");
  check_conv(3, 128, 64, 48, 3, 1, false, false, 1, 1, 1, 1);
  check_conv(128, 128, 64, 64, 3, 1, false, true, 1, 1, 1, 1);
  check_conv(128, 256, 40, 40, 3, 1, false, false, 1, 1, 1, 1);
  check_conv(256, 256, 64, 64, 3, 2, false, false, 0, 0, 1, 1);
  check_conv(128, 64, 48, 48, 1, 1, false, true, 0, 0, 0, 0);
  check_conv(512, 512, 16, 16, 3, 1, true, false, 1, 1, 1, 1);
  check_conv(128, 3, 64, 64, 3, 1, false, false, 1, 1, 1, 1);
  check_conv(32, 512, 17, 13, 3, 1, false, false, 1, 1, 1, 1);
  check_conv(64, 64, 9, 7, 3, 1, false, true, 1, 1, 1, 1);
  }
  check_tma_identical(128, 128, 64, 64, 3, 1, false, true);
  check_tma_identical(128, 256, 40, 36, 3, 1, false, false);
  check_tma_identical(256, 256, 64, 64, 3, 2, false, false);
  check_tma_identical(256, 128, 33, 45, 3, 2, false, true);
  check_tma_identical(512, 512, 16, 16, 3, 1, true, false);
  check_tma_identical(128, 64, 48, 48, 1, 1, false, true);
  check_tma_identical(64, 3, 37, 29, 3, 1, false, false);
  check_tma_identical(192, 200, 9, 7, 3, 1, false, true);
  check_attention_tma_identical(512, 5000);
  check_attention_tma_identical(64, 136);
  check_tiles_identical(128, 256, 40, 36, 3, 1, false);
  check_tiles_identical(256, 256, 64, 64, 3, 2, false);
  check_tiles_identical(512, 512, 16, 16, 3, 1, true);
  check_tiles_identical(128, 64, 48, 48, 1, 1, false);
  check_tiles_identical(3, 128, 40, 40, 3, 1, false);
  check_group_norm(128, 64, 64, true, 0.f, false);
  check_group_norm(512, 32, 32, false, 0.f, true);
  check_group_norm(256, 30, 30, true, 1000.f, false);
  check_upsample(64, 17, 24);
  for (bool wgmma : {true, false}) {
    Override attention(Variant::channels_attention_kernel, wgmma ? "wgmma" : "mma");
    std::printf("attention products on %s\n", wgmma ? "wgmma" : "mma.sync");
    check_attention(512, 1024, 1.f);
    check_attention(512, 5000, 1.f);
    check_attention(512, 4096, 3.f);
    check_attention(64, 130, 1.f);  // a partial tile in every dimension
  }
  std::printf("CHECKS: %s (%d failed)\n", failures ? "FAIL" : "PASS", failures);
  if (timing) time_vae_sequences(sizes, tiles);
  return failures ? 1 : 0;
}
