#include "backend/cuda/kernels/linear/gemm.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "backend/cuda/kernels/linear/gemm_wgmma.h"
#include "backend/cuda/runtime/check.h"
#include "backend/linear/linear.h"
#include "backend/variants.h"
#include "core/error.h"

namespace tf::cuda {

namespace {

// A row's sum order must not depend on how many rows share the product (a prompt packed with its
// negative, a picture's two guidance branches, give each their own bytes), so the algorithm is chosen
// once per weight shape for each of two row ranges, at a reference row count, and reused for every
// count in the range (one algorithm: one tile shape, one k split, so one sum order for each element).
constexpr int64_t kReferenceRows = kLinearPackedRows;
int64_t large_reference_rows() {
  constexpr int64_t rows[] = {4224, 4096, 8192};  // TF_LINEAR_LARGE_ROWS's choices
  return rows[variant(Variant::linear_large_rows)];
}

struct RowLayouts {
  cublasLtMatrixLayout_t b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};  // the weight shape's algorithm, or this row count's own where it can't run
};

struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr;
  cublasLtMatmulAlgo_t algo{};        // up to kReferenceRows rows
  cublasLtMatmulAlgo_t algo_large{};  // more
  std::map<int64_t, RowLayouts> rows;
};

using Key = std::tuple<int64_t, int64_t, uint32_t, uint32_t, uint32_t, int, int64_t>;  // n, k, alignments, GemmBias,
                                                                                       // large reference rows

std::mutex g_mu;
std::map<Key, Plan> g_plans;

uint32_t alignment_of(const void* p) {
  auto u = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 2 && (u % a) != 0) a /= 2;
  return a;
}

// Column-major view: y^T [n, m] = (w [n, k] as col-major k x n)^T . (x [m, k] as col-major k x m).
RowLayouts make_row_layouts(int64_t m, int64_t n, int64_t k) {
  RowLayouts r;
  TF_CUBLAS(cublasLtMatrixLayoutCreate(&r.b, CUDA_R_16BF, k, m, k));
  TF_CUBLAS(cublasLtMatrixLayoutCreate(&r.c, CUDA_R_16BF, n, m, n));
  return r;
}

cublasLtMatmulAlgo_t heuristic_algo(const Plan& p, const RowLayouts& r, int64_t m, int64_t n, int64_t k,
                                    uint32_t align_x, uint32_t align_w, uint32_t align_y) {
  cublasLtMatmulPreference_t pref = nullptr;
  TF_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  size_t ws = lt_workspace_bytes();
  TF_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  // split-K partials may only be reduced in fp32 (never rounded to bf16 in between, never atomics)
  uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  TF_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
                                                 sizeof schemes));
  TF_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_w,
                                                 sizeof align_w));
  TF_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_x,
                                                 sizeof align_x));
  TF_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_y,
                                                 sizeof align_y));
  TF_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_y,
                                                 sizeof align_y));
  cublasLtMatmulHeuristicResult_t res{};
  int found = 0;
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_handle(), p.op, p.a, r.b, r.c, r.c, pref, 1, &res, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0)
    fail("cuBLASLt has no bf16 algorithm for a [" + std::to_string(m) + ", " + std::to_string(k) + "] x [" +
         std::to_string(n) + ", " + std::to_string(k) + "]^T product (status " + std::to_string(int(st)) + ")");
  return res.algo;
}

Plan make_plan(const Key& key) {
  auto [n, k, align_x, align_w, align_y, bias, large_rows] = key;
  Plan p;
  TF_CUBLAS(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  TF_CUBLAS(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  TF_CUBLAS(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (bias != int(GemmBias::none)) {  // y = bf16(fp32 sum + b): the epilogue adds before its one rounding
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    const cudaDataType_t type = bias == int(GemmBias::f32) ? CUDA_R_32F : CUDA_R_16BF;
    TF_CUBLAS(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    TF_CUBLAS(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof type));
  }
  TF_CUBLAS(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16BF, k, n, k));
  RowLayouts ref = make_row_layouts(kReferenceRows, n, k);
  p.algo = heuristic_algo(p, ref, kReferenceRows, n, k, align_x, align_w, align_y);
  cublasLtMatrixLayoutDestroy(ref.b);
  cublasLtMatrixLayoutDestroy(ref.c);
  RowLayouts large = make_row_layouts(large_rows, n, k);
  p.algo_large = heuristic_algo(p, large, large_rows, n, k, align_x, align_w, align_y);
  cublasLtMatrixLayoutDestroy(large.b);
  cublasLtMatrixLayoutDestroy(large.c);
  return p;
}

const RowLayouts& row_layouts(Plan& p, const Key& key, int64_t m) {
  auto it = p.rows.find(m);
  if (it != p.rows.end()) return it->second;
  auto [n, k, align_x, align_w, align_y, bias, large_rows] = key;
  RowLayouts r = make_row_layouts(m, n, k);
  cublasLtMatmulHeuristicResult_t check{};
  r.algo = m > kReferenceRows ? p.algo_large : p.algo;
  if (cublasLtMatmulAlgoCheck(lt_handle(), p.op, p.a, r.b, r.c, r.c, &r.algo, &check) != CUBLAS_STATUS_SUCCESS ||
      check.workspaceSize > lt_workspace_bytes())
    r.algo = heuristic_algo(p, r, m, n, k, align_x, align_w, align_y);
  return p.rows.emplace(m, r).first->second;
}

}  // namespace

void gemm_bf16_xwt(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k) {
  const StreamingWeight one{w, y, n};
  gemm_bf16_xwt_group(x, m, k, std::span(&one, 1));
}

void gemm_bf16_xwt_group(const void* x, int64_t m, int64_t k, std::span<const StreamingWeight> ws) {
  if (m == 0) return;
  require(k > 0, "gemm_bf16_xwt: empty inner dimension");
  if (!gemm_cublaslt_forced() && gemm_streaming_fits(m, k, x, ws)) return gemm_streaming(x, m, k, ws);
  for (const StreamingWeight& w : ws) {
    // TF_GEMM=wgmma: our kernel above the streaming rows wherever it fits, so the choice is n's and k's, not m's
    const GemmWgmma g{.x = x, .w = w.w, .w2 = nullptr, .y = w.y, .gate = nullptr, .m = m, .n = w.n, .k = k};
    if (m > kStreamingRows && variant_is<Variant::gemm>("wgmma") && gemm_wgmma_fits(g)) {
      gemm_wgmma(GemmEpilogue::store, g);
      continue;
    }
    gemm_cublaslt(x, w.w, w.y, m, w.n, k);
  }
}

void gemm_cublaslt(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k) {
  gemm_cublaslt_bias(x, w, nullptr, GemmBias::none, y, m, n, k);
}

void gemm_cublaslt_bias(const void* x, const void* w, const void* b, GemmBias bias, void* y, int64_t m, int64_t n,
                        int64_t k) {
  if (m == 0 || n == 0) return;
  require(k > 0, "gemm_bf16_xwt: empty inner dimension");
  Key key{n, k, alignment_of(x), alignment_of(w), alignment_of(y), int(bias), large_reference_rows()};
  std::lock_guard<std::mutex> l(g_mu);
  auto it = g_plans.find(key);
  if (it == g_plans.end()) it = g_plans.emplace(key, make_plan(key)).first;
  const Plan* plan = &it->second;
  const RowLayouts* r = &row_layouts(it->second, key, m);
  // the bias is the call's; cublasLtMatmul reads the descriptor when it is called, under this lock
  if (bias != GemmBias::none)
    TF_CUBLAS(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b, sizeof b));
  const float one = 1.0f, zero = 0.0f;
  mark_streaming_launch(false);
  TF_CUBLAS(cublasLtMatmul(lt_handle(), plan->op, &one, w, plan->a, x, r->b, &zero, y, r->c, y, r->c, &r->algo,
                           lt_workspace(), lt_workspace_bytes(), stream()));
}

bool gemm_cublaslt_forced() { return variant_is<Variant::gemm>("cublaslt"); }

int gemm_cached_plans() {
  std::lock_guard<std::mutex> l(g_mu);
  return static_cast<int>(g_plans.size());
}

}  // namespace tf::cuda
