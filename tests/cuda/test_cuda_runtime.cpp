#include <cmath>
#include <cstring>
#include <vector>

#include "backend/elementwise/silu_gated_product.h"
#include "backend/device/device.h"
#include "backend/device/upload.h"
#include "backend/variants.h"
#include "check/random_tensor.h"
#include "core/bf16.h"
#include "core/error.h"
#include "core/tensor.h"
#include "cuda_test_util.h"

#ifdef TF_HAVE_CUDA
#include "backend/cuda/runtime/capture_arena.h"
#include "backend/cuda/runtime/check.h"
#include "backend/cuda/kernels/linear/gemm.h"
#endif

namespace tf {
namespace {

using tf::check::random_bf16;
TEST(CudaRuntime, CopiesRoundTripAndCountsPeak) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  Tensor h = random_bf16({1000, 37}, 1);
  cuda::reset_peak_memory();
  size_t before = cuda::memory_stats().in_use;
  {
    Tensor d = to_device(h, Device::CUDA);
    EXPECT_EQ(d.device, Device::CUDA);
    EXPECT_GE(cuda::memory_stats().in_use, before + h.nbytes());
    Tensor back = to_device(d, Device::CPU);
    EXPECT_EQ(0, std::memcmp(back.data, h.data, h.nbytes()));
    Tensor z = zeros(DType::F32, {513}, Device::CUDA);
    Tensor zb = to_device(z, Device::CPU);
    for (int i = 0; i < 513; ++i) ASSERT_EQ(zb.ptr<float>()[i], 0.0f);
  }
  EXPECT_EQ(cuda::memory_stats().in_use, before);  // freed on release
  EXPECT_GE(cuda::memory_stats().peak_in_use, before + h.nbytes());
  EXPECT_NE(cuda::peak_memory_line().find("peak GPU memory"), std::string::npos);
#endif
}

// The memory checks count the pool's cached blocks as free and leave them cached: a trim there
// would make every later call map its memory afresh.
TEST(CudaRuntime, AvailableMemoryCountsThePoolsCacheWithoutTrimmingIt) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  constexpr int64_t kBytes = int64_t(256) << 20;
  cuda::release_cached_memory();
  const double before = double(available_memory(Device::CUDA).bytes);
  { const Tensor t = empty(DType::U8, {kBytes}, Device::CUDA); }
  cuda::synchronize();
  ASSERT_GE(cuda::memory_stats().pool_cached, size_t(kBytes)) << "the freed block was not kept in the pool";
  const double after = double(available_memory(Device::CUDA).bytes);
  EXPECT_GE(cuda::memory_stats().pool_cached, size_t(kBytes)) << "available_memory trimmed the pool";
  EXPECT_NEAR(after, before, double(64 << 20)) << "the cached block is not counted as available";
#endif
}

// Rows copied back land in pinned memory (the copy engine's full speed), reused once freed.
TEST(CudaRuntime, CopiesBackIntoReusedPinnedMemory) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  cuda::release_cached_memory();  // whatever earlier tests left cached plays no part
  Tensor h = random_bf16({4096, 33}, 2);
  Tensor d = to_device(h, Device::CUDA);
  Tensor back = to_device(d, Device::CPU);
  ASSERT_EQ(back.device, Device::CPU);
  EXPECT_EQ(0, std::memcmp(back.data, h.data, h.nbytes()));
  cudaPointerAttributes a{};
  ASSERT_EQ(cudaPointerGetAttributes(&a, back.data), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeHost) << "the copy back did not land in pinned memory";
  const void* first = back.data;
  back = Tensor();
  Tensor again = to_device(d, Device::CPU);
  EXPECT_EQ(again.data, first) << "a freed pinned buffer of the same size was not reused";
  EXPECT_EQ(0, std::memcmp(again.data, h.data, h.nbytes()));
  // into ordinary (pageable) host memory, and up from it, through a pinned buffer: the same bytes
  Tensor pageable = empty(DType::BF16, h.shape, Device::CPU);
  copy_into(pageable, d);
  EXPECT_EQ(0, std::memcmp(pageable.data, h.data, h.nbytes()));
  Tensor up = to_device(pageable, Device::CUDA);
  Tensor up_back = to_device(up, Device::CPU);
  EXPECT_EQ(0, std::memcmp(up_back.data, h.data, h.nbytes()));
  // a copy larger than one staging piece (16 MiB) goes through it piece by piece
  Tensor big = random_bf16({9000, 1000}, 3);
  Tensor big_d = to_device(big, Device::CUDA);
  Tensor big_back = empty(DType::BF16, big.shape, Device::CPU);
  copy_into(big_back, big_d);
  EXPECT_EQ(0, std::memcmp(big_back.data, big.data, big.nbytes()));
  // a view copies its own rows only
  Tensor rows = to_device(d.rows(7, 19), Device::CPU);
  EXPECT_EQ(0, std::memcmp(rows.data, h.rows(7, 19).data, rows.nbytes()));
  again = Tensor();
  rows = Tensor();
  cuda::release_cached_memory();  // the cached buffers go back to the driver
  Tensor fresh = to_device(d, Device::CPU);
  EXPECT_EQ(0, std::memcmp(fresh.data, h.data, h.nbytes()));
#endif
}

TEST(CudaRuntime, RefusesGpusTheKernelsWereNotBuiltFor) {
#ifdef TF_HAVE_CUDA
  // runs without a GPU: the check is on the device's name and compute capability
  std::string a100 = cuda::unsupported_gpu_reason("NVIDIA A100-SXM4-80GB", 8, 0);
  EXPECT_NE(a100.find("NVIDIA A100-SXM4-80GB (sm_80)"), std::string::npos) << a100;
  EXPECT_NE(a100.find("--device cpu"), std::string::npos) << a100;
  EXPECT_FALSE(cuda::unsupported_gpu_reason("NVIDIA B200", 10, 0).empty());  // sm_90a code does not run there
  EXPECT_TRUE(cuda::unsupported_gpu_reason("NVIDIA H200", 9, 0).empty());
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(CudaRuntime, OutOfMemoryNamesTheBytes) {
  TF_REQUIRE_CUDA_GPU();
  try {
    Tensor huge = empty(DType::F32, {int64_t(1) << 40}, Device::CUDA);
    FAIL() << "a 4 TiB allocation succeeded";
  } catch (const OutOfMemory& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("asked for"), std::string::npos) << m;
    EXPECT_NE(m.find("free"), std::string::npos) << m;
  }
  // the device still works afterwards
  Tensor ok = zeros(DType::F32, {16}, Device::CUDA);
  EXPECT_EQ(ok.device, Device::CUDA);
}

TEST(CudaRuntime, PrepIsADependentOnlyRightAfterAStreamingProduct) {
#ifdef TF_HAVE_CUDA
  // host bookkeeping only, with both dependent-launch variants on
  variants::Override pdl(Variant::cuda_pdl, "on"), prep(Variant::cuda_pdl_prep, "on");
  cuda::mark_streaming_launch(true);
  EXPECT_TRUE(cuda::launch_prep_as_dependent());
  EXPECT_FALSE(cuda::launch_prep_as_dependent()) << "the mark is taken by the launch that reads it";
  cuda::mark_streaming_launch(true);
  cuda::mark_streaming_launch(false);  // a cuBLASLt product in between
  EXPECT_FALSE(cuda::launch_prep_as_dependent());
  for (Variant off : {Variant::cuda_pdl, Variant::cuda_pdl_prep}) {
    variants::Override plain(off, "off");
    cuda::mark_streaming_launch(true);
    EXPECT_FALSE(cuda::launch_prep_as_dependent()) << variants::row(off).env << "=off";
  }
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(CudaRuntime, CaptureArenaReusesFreedRangesFirstFit) {
#ifdef TF_HAVE_CUDA
  // host bookkeeping only: offsets in 256-byte ranges, freed ranges merged with their neighbours
  cuda::CaptureArena plan(nullptr, 0);
  EXPECT_EQ(plan.take(100), 0u);
  EXPECT_EQ(plan.take(300), 256u);
  EXPECT_EQ(plan.take(256), 768u);
  EXPECT_EQ(plan.high_water(), 1024u);
  EXPECT_TRUE(plan.give_back(256));
  EXPECT_FALSE(plan.give_back(256)) << "a range given back twice";
  EXPECT_FALSE(plan.give_back(300)) << "no range starts there";
  EXPECT_EQ(plan.take(200), 256u) << "first fit: the freed range, not the end";
  EXPECT_TRUE(plan.give_back(0));
  EXPECT_TRUE(plan.give_back(256));
  EXPECT_EQ(plan.take(700), 0u) << "ranges freed next to each other merge";
  EXPECT_EQ(plan.high_water(), 1024u);
  EXPECT_EQ(plan.live(), 2u);

  // a buffer arena hands out nothing past its bytes (the caller falls back to the pool)
  char buffer[512];
  cuda::CaptureArena carve(buffer, 512);
  EXPECT_EQ(carve.take(256), 0u);
  EXPECT_EQ(carve.take(200), 256u);
  EXPECT_EQ(carve.take(1), SIZE_MAX);
  EXPECT_TRUE(carve.holds(buffer + 511));
  EXPECT_FALSE(carve.holds(buffer + 512));
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(CudaRuntime, UploadMatchesHostBytes) {
  TF_REQUIRE_CUDA_GPU();
  // sizes around the staging chunk so partial chunks and many chunks are both exercised
  std::vector<Tensor> host = {random_bf16({3, 5}, 2), random_bf16({9000, 4096}, 3), random_bf16({1, 4097}, 4)};
  std::vector<Tensor> dev = host;
  std::vector<std::vector<Tensor*>> ptrs{{&dev[0], &dev[1]}, {&dev[2]}};  // the first two in one allocation
  UploadReport r = upload_tensors(ptrs, Device::CUDA, "test weights");
  size_t total = 0;
  for (size_t i = 0; i < host.size(); ++i) {
    ASSERT_EQ(dev[i].device, Device::CUDA);
    Tensor back = to_device(dev[i], Device::CPU);
    EXPECT_EQ(0, std::memcmp(back.data, host[i].data, host[i].nbytes())) << "tensor " << i;
    total += host[i].nbytes();
    // a group in one allocation in its order, so a kernel may read neighbours through one tensor map
    if (i == 1) {
      EXPECT_EQ(static_cast<char*>(dev[i].data) - static_cast<char*>(dev[i - 1].data), (host[i - 1].nbytes() + 255) / 256 * 256) << "tensor " << i;
    }
  }
  EXPECT_EQ(r.bytes, total);
}

#ifdef TF_HAVE_CUDA
// y = x w^T against a float64 sum; the allowance is one bf16 rounding of the result plus the
// fp32 accumulation error bound k * 2^-24 * sum |x w|.
using GemmFn = void (*)(const void*, const void*, void*, int64_t, int64_t, int64_t);

void expect_near_float64(const Tensor& x, const Tensor& w, const Tensor& y) {
  const int64_t m = x.dim(0), k = x.dim(1), n = w.dim(0);
  int bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0, a = 0;
      for (int64_t t = 0; t < k; ++t) {
        double p = double(to_float(x.ptr<bf16>()[i * k + t])) * double(to_float(w.ptr<bf16>()[j * k + t]));
        s += p;
        a += std::fabs(p);
      }
      double got = to_float(y.ptr<bf16>()[i * n + j]);
      double allow = std::fabs(s) * std::ldexp(1.0, -8) + a * double(k) * std::ldexp(1.0, -24) + 1e-30;
      if (std::fabs(got - s) > allow && bad++ < 5)
        ADD_FAILURE() << "y[" << i << "," << j << "] = " << got << ", float64 " << s << " (allow " << allow << ")";
    }
  EXPECT_EQ(bad, 0) << "m=" << m << " n=" << n << " k=" << k;
}

// The streaming kernel with its weight tiles forced to TILE rows.
template <int TILE>
void gemm_streaming_tiles(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k) {
  const cuda::StreamingWeight one{w, y, n};
  cuda::gemm_streaming(x, m, k, std::span(&one, 1), TILE);
}

void check_gemm(int64_t m, int64_t n, int64_t k, uint32_t seed, GemmFn gemm = cuda::gemm_bf16_xwt) {
  Tensor x = random_bf16({m, k}, seed), w = random_bf16({n, k}, seed + 1, 0.05f);
  Tensor dx = to_device(x, Device::CUDA), dw = to_device(w, Device::CUDA);
  Tensor dy = empty(DType::BF16, {m, n}, Device::CUDA), dy2 = empty(DType::BF16, {m, n}, Device::CUDA);
  gemm(dx.data, dw.data, dy.data, m, n, k);
  gemm(dx.data, dw.data, dy2.data, m, n, k);
  Tensor y = to_device(dy, Device::CPU), y2 = to_device(dy2, Device::CPU);
  ASSERT_EQ(0, std::memcmp(y.data, y2.data, y.nbytes())) << "repeat differs";
  expect_near_float64(x, w, y);
}
#endif

TEST(CudaGemm, MatchesFloat64AndRepeatsExactly) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  // the default path: the streaming kernel up to 128 rows (one and two 64-row halves, one k share
  // and several, a partial weight tile), cuBLASLt above and where the geometry does not fit
  check_gemm(1, 64, 128, 10);
  check_gemm(10, 256, 512, 11);
  check_gemm(75, 96, 4096, 12);
  check_gemm(120, 96, 4096, 21);
  check_gemm(128, 1030, 1024, 22);
  check_gemm(33, 2048, 1024, 20);
  check_gemm(75, 32, 4096, 14);
  check_gemm(300, 130, 200, 13);
  check_gemm(129, 256, 256, 23);
  check_gemm(75, 256, 12288, 24);
  check_gemm(20, 130, 640, 25);
  check_gemm(7, 5, 12288, 15);
  // one k share (output tile through shared memory): rows in 16-byte pieces, and not (n % 8 != 0)
  check_gemm(75, 264, 192, 26);
  check_gemm(10, 130, 128, 27);
  // each tile height forced, over 1, 2, 4 and 8 k shares, whole and partial tiles, one and two weight
  // rows a warpgroup's tile, and every row count up to 128 (each instantiation: x in 8-row tiles)
  for (GemmFn tiles : {GemmFn(gemm_streaming_tiles<128>), GemmFn(gemm_streaming_tiles<256>)}) {
    check_gemm(10, 256, 512, 11, tiles);
    check_gemm(75, 96, 4096, 12, tiles);
    check_gemm(128, 1030, 1024, 22, tiles);
    check_gemm(33, 2048, 1024, 20, tiles);
    check_gemm(75, 256, 12288, 24, tiles);
    check_gemm(75, 264, 192, 26, tiles);
    check_gemm(10, 130, 128, 27, tiles);
    check_gemm(96, 4096, 1024, 28, tiles);
    for (int64_t m = 1; m <= 128; ++m) check_gemm(m, 384, 512, 100 + uint32_t(m), tiles);
  }
  // cuBLASLt at any row count (TF_GEMM=cublaslt)
  check_gemm(10, 256, 512, 11, cuda::gemm_cublaslt);
  check_gemm(75, 96, 4096, 12, cuda::gemm_cublaslt);
#endif
}

#ifdef TF_HAVE_CUDA
// Rows [0, m) of a product over `rows` rows (<= 128, the streaming kernel's) of tile_rows-row weight
// tiles (0: the chosen), copied back.
Tensor product_rows(const Tensor& dx, const Tensor& dw, int64_t rows, int64_t m, int tile_rows) {
  Tensor dy = empty(DType::BF16, {rows, dw.dim(0)}, Device::CUDA);
  const cuda::StreamingWeight one{dw.data, dy.data, dw.dim(0)};
  cuda::gemm_streaming(dx.data, rows, dx.dim(1), std::span(&one, 1), tile_rows);
  return to_device(dy, Device::CPU).rows(0, m);
}
#endif

TEST(CudaGemm, RowsDoNotDependOnTheRowCount) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  // a prompt alone, packed with its negative, or at any row count: the same bytes, for every tile
  // height and the chosen one (k = 4096 and 12288: 2 to 8 k shares)
  for (int64_t k : {4096, 12288}) {
    Tensor x = random_bf16({128, k}, 30), w = random_bf16({1024, k}, 31, 0.05f);
    Tensor dx = to_device(x, Device::CUDA), dw = to_device(w, Device::CUDA);
    for (int tile : {0, 128, 192, 256}) {
      SCOPED_TRACE("k " + std::to_string(k) + ", tile rows " + std::to_string(tile));
      Tensor ten = product_rows(dx, dw, 10, 10, tile);
      for (int64_t rows : {1, 16, 17, 75, 85, 112, 113, 128}) {
        Tensor mine = product_rows(dx, dw, rows, std::min<int64_t>(rows, 10), tile);
        EXPECT_EQ(0, std::memcmp(mine.data, ten.data, mine.nbytes())) << rows << " rows";
      }
      Tensor y75 = product_rows(dx, dw, 75, 75, tile), y85 = product_rows(dx, dw, 85, 75, tile);
      EXPECT_EQ(0, std::memcmp(y75.data, y85.data, y75.nbytes())) << "75 rows alone vs packed to 85";
    }
  }
#endif
}

TEST(CudaGemm, TileHeightsGiveTheSameBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  // each output's k order is the same on every tile height (k = 256: one share a tile at every
  // height; k = 4096: eight), so the chooser's pick never changes a byte
  for (int64_t k : {256, 4096}) {
    Tensor x = random_bf16({75, k}, 60), w = random_bf16({1536, k}, 61, 0.05f);
    Tensor dx = to_device(x, Device::CUDA), dw = to_device(w, Device::CUDA);
    std::vector<int> shares;
    for (int tile : {128, 192, 256}) shares.push_back(cuda::streaming_splits(k, static_cast<int>(1536 / tile)));
    ASSERT_TRUE(shares[0] == shares[1] && shares[1] == shares[2]) << "k " << k << ": tile heights take different shares";
    Tensor y256 = product_rows(dx, dw, 75, 75, 256);
    expect_near_float64(x, w, y256);
    for (int tile : {128, 192}) {
      Tensor y = product_rows(dx, dw, 75, 75, tile);
      EXPECT_EQ(0, std::memcmp(y.data, y256.data, y.nbytes())) << "k " << k << ", " << tile << "-row tiles";
    }
  }
#endif
}

// The MLP's gated launch (gate and up adjacent, up after gate) gives the bytes of the two products
// then the elementwise kernel: 256- and 192-row tiles, a partial last tile, one row and 128, the
// released geometry; and it declines, launching nothing, where its map or its epilogue cannot work.
TEST(CudaGemm, SiluGatedLaunchGivesTheStepsBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  struct Geometry {
    int64_t m, k, n;
  };
  for (Geometry G : {Geometry{75, 256, 384}, Geometry{1, 256, 200}, Geometry{128, 256, 96}, Geometry{75, 4096, 12288},
                     Geometry{10, 4096, 12288}, Geometry{85, 4096, 12288}}) {
    Tensor x = to_device(random_bf16({G.m, G.k}, 70), Device::CUDA);
    Tensor both = to_device(random_bf16({2 * G.n, G.k}, 71, 0.05f), Device::CUDA);
    Tensor wg = both.rows(0, G.n), wu = both.rows(G.n, 2 * G.n);
    Tensor y = empty(DType::BF16, {G.m, G.n}, Device::CUDA), gate = empty(DType::BF16, {G.m, G.n}, Device::CUDA),
           up = empty(DType::BF16, {G.m, G.n}, Device::CUDA), y2 = empty(DType::BF16, {G.m, G.n}, Device::CUDA);
    ASSERT_TRUE(cuda::gemm_streaming_silu_gated(x.data, G.m, G.k, wg.data, wu.data, G.n, y.data)) << "n " << G.n;
    const cuda::StreamingWeight ws[2] = {{wg.data, gate.data, G.n}, {wu.data, up.data, G.n}};
    cuda::gemm_bf16_xwt_group(x.data, G.m, G.k, ws);
    silu_gated_product(gate, up, y2);
    Tensor a = to_device(y, Device::CPU), b = to_device(y2, Device::CPU);
    EXPECT_EQ(0, std::memcmp(a.data, b.data, a.nbytes())) << "m " << G.m << " k " << G.k << " n " << G.n;
  }
  Tensor x = to_device(random_bf16({75, 4096}, 72), Device::CUDA);
  Tensor both = to_device(random_bf16({2 * 1536, 4096}, 73, 0.05f), Device::CUDA);
  Tensor y = empty(DType::BF16, {75, 1536}, Device::CUDA);
  const void *lo = both.data, *hi = both.rows(1536, 3072).data;
  EXPECT_FALSE(cuda::gemm_streaming_silu_gated(x.data, 75, 4096, hi, lo, 1536, y.data)) << "up before gate";
  EXPECT_FALSE(cuda::gemm_streaming_silu_gated(x.data, 75, 4096, lo, hi, 1532, y.data)) << "n not in eights";
  EXPECT_FALSE(cuda::gemm_streaming_silu_gated(x.data, 75, 4096, lo, hi, 1536, y.data)) << "k shares";
  EXPECT_FALSE(cuda::gemm_streaming_silu_gated(x.data, 129, 4096, lo, hi, 1536, y.data)) << "rows";
#endif
}

TEST(CudaGemm, GroupMatchesFloat64PerWeight) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  // four weights on one x (as the DeltaNet input projections: wide, wide, narrow, narrow)
  const int64_t m = 37, k = 1024;
  const std::vector<int64_t> ns = {1100, 256, 32, 2};
  Tensor x = random_bf16({m, k}, 40), dx = to_device(x, Device::CUDA);
  std::vector<Tensor> w, dw, dy;
  std::vector<cuda::StreamingWeight> ws;
  for (size_t i = 0; i < ns.size(); ++i) {
    w.push_back(random_bf16({ns[i], k}, 41 + uint32_t(i), 0.05f));
    dw.push_back(to_device(w.back(), Device::CUDA));
    dy.push_back(empty(DType::BF16, {m, ns[i]}, Device::CUDA));
  }
  for (size_t i = 0; i < ns.size(); ++i) ws.push_back({dw[i].data, dy[i].data, ns[i]});
  ASSERT_TRUE(cuda::gemm_streaming_fits(m, k, dx.data, ws));
  for (int tile : {0, 128, 192, 256}) {
    // fresh outputs, so a launch that writes nothing cannot pass on the previous one's
    for (size_t i = 0; i < ns.size(); ++i) dy[i] = zeros(DType::BF16, {m, ns[i]}, Device::CUDA);
    ws.clear();
    for (size_t i = 0; i < ns.size(); ++i) ws.push_back({dw[i].data, dy[i].data, ns[i]});
    cuda::gemm_streaming(dx.data, m, k, ws, tile);
    for (size_t i = 0; i < ns.size(); ++i) {
      SCOPED_TRACE("weight " + std::to_string(i) + ", tile rows " + std::to_string(tile));
      expect_near_float64(x, w[i], to_device(dy[i], Device::CPU));
    }
  }
#endif
}

TEST(CudaGemm, KShareSumsMatchFloat64AndDoNotDependOnTheRowCount) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  // the released out / o (4096 -> 4096) and down (12288 -> 4096) shapes, a partial tile, and rows
  // not in 16-byte pieces (n % 4 != 0)
  for (auto [k, n] : {std::pair<int64_t, int64_t>{4096, 4096}, {12288, 4096}, {1024, 130}, {512, 66}}) {
    const int P = cuda::streaming_share_count(k, n);
    SCOPED_TRACE("k " + std::to_string(k) + ", n " + std::to_string(n) + ", " + std::to_string(P) + " shares");
    if (n == 4096) {
      EXPECT_GE(P, 2) << "the released shapes take k shares";
    }
    if (P == 0) continue;
    Tensor x = random_bf16({128, k}, 50), w = random_bf16({n, k}, 51, 0.05f);
    Tensor dx = to_device(x, Device::CUDA), dw = to_device(w, Device::CUDA);
    auto sums = [&](int64_t m) {
      Tensor d = zeros(DType::F32, {P, m, n}, Device::CUDA);
      cuda::gemm_streaming_shares(dx.data, m, k, dw.data, n, d.ptr<float>());
      return to_device(d, Device::CPU);
    };
    Tensor all = sums(128), again = sums(128);
    ASSERT_EQ(0, std::memcmp(all.data, again.data, all.nbytes())) << "repeat differs";
    const int64_t range = k / P;
    int bad = 0;
    for (int64_t p = 0; p < P; ++p)
      for (int64_t i = 0; i < 128; i += 9)
        for (int64_t j = 0; j < n; j += 7) {
          double s = 0, a = 0;
          for (int64_t t = p * range; t < (p + 1) * range; ++t) {
            double q = double(to_float(x.ptr<bf16>()[i * k + t])) * double(to_float(w.ptr<bf16>()[j * k + t]));
            s += q;
            a += std::fabs(q);
          }
          const double got = all.ptr<float>()[(p * 128 + i) * n + j], allow = a * double(range) * std::ldexp(1.0, -24) + 1e-30;
          if (std::fabs(got - s) > allow && bad++ < 5)
            ADD_FAILURE() << "share " << p << " [" << i << "," << j << "] = " << got << ", float64 " << s;
        }
    EXPECT_EQ(bad, 0);
    for (int64_t m : {1, 10, 75, 85}) {
      Tensor mine = sums(m);
      for (int64_t p = 0; p < P; ++p)
        EXPECT_EQ(0, std::memcmp(mine.ptr<float>() + p * m * n, all.ptr<float>() + p * 128 * n, size_t(m * n) * 4))
            << "share " << p << " of " << m << " rows";
    }
  }
#endif
}

TEST(CudaGemm, PlantedFaultIsCaught) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  // swapping the operands' roles (x^T w) must not pass the same check: guard the check itself
  Tensor x = random_bf16({4, 64}, 20), w = random_bf16({4, 64}, 21);
  Tensor dx = to_device(x, Device::CUDA), dw = to_device(w, Device::CUDA);
  Tensor dy = empty(DType::BF16, {4, 4}, Device::CUDA);
  cuda::gemm_bf16_xwt(dw.data, dx.data, dy.data, 4, 4, 64);  // computes w x^T = (x w^T)^T
  Tensor y = to_device(dy, Device::CPU);
  int off = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int t = 0; t < 64; ++t) s += double(to_float(x.ptr<bf16>()[i * 64 + t])) * to_float(w.ptr<bf16>()[j * 64 + t]);
      if (std::fabs(to_float(y.ptr<bf16>()[i * 4 + j]) - s) > 0.05 * std::fabs(s) + 1e-3) ++off;
    }
  EXPECT_GT(off, 0);
#endif
}

}  // namespace
}  // namespace tf
