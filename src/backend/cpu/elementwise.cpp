// Element-wise CPU kernels and copies: embedding gather, residual add, gated products, the
// query/gate split.
#include <cstring>
#include <string>

#include "backend/cpu/bf16_rows.h"
#include "backend/attention/split_query_gate.h"
#include "backend/elementwise/residual_add.h"
#include "backend/elementwise/sigmoid_gate.h"
#include "backend/elementwise/silu_gated_product.h"
#include "backend/embed/embedding.h"
#include "core/error.h"
#include "core/parallel.h"

namespace tf::cpu {

void embedding(const Tensor& table, const Tensor& ids, Tensor& out, IdCheck check) {
  int64_t vocab = table.dim(0), hidden = table.dim(1), n = ids.dim(0);
  const int32_t* id = ids.ptr<int32_t>();
  auto outside = [&](int32_t v) { return v < 0 || v >= vocab; };
  if (check == IdCheck::by_op)
    for (int64_t t = 0; t < n; ++t)
      if (outside(id[t]))
        fail("embedding: token id " + std::to_string(id[t]) + " at position " + std::to_string(t) +
             " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  const uint16_t* src = bf16_ptr(table);
  uint16_t* dst = bf16_ptr_mut(out);
  parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      if (outside(id[t])) std::memset(dst + t * hidden, 0, hidden * sizeof(uint16_t));
      else std::memcpy(dst + t * hidden, src + id[t] * hidden, hidden * sizeof(uint16_t));
    }
  });
}

void residual_add(Tensor& h, const Tensor& d) {
  uint16_t* hp = bf16_ptr_mut(h);
  parallel_for(h.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hp[i] = st(ld(hp, i) + residual_delta(d, i));
  }, 1 << 14);
}

void residual_add_gated(Tensor& h, const Tensor& d, const Tensor& gate) {
  uint16_t* hp = bf16_ptr_mut(h);
  const uint16_t* dp = bf16_ptr(d);
  const uint16_t* gp = bf16_ptr(gate);
  const int64_t n = gate.dim(0);
  parallel_for(h.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hp[i] = st(ld(hp, i) + ld(dp, i) * ld(gp, i % n));
  }, 1 << 14);
}

void silu_gated_product(const Tensor& gate, const Tensor& up, Tensor& y) {
  const uint16_t* g = bf16_ptr(gate);
  const uint16_t* u = bf16_ptr(up);
  uint16_t* o = bf16_ptr_mut(y);
  parallel_for(gate.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float act = round_bf16(silu32(ld(g, i)));  // torch rounds act_fn's output
      o[i] = st(act * ld(u, i));
    }
  }, 1 << 13);
}

void sigmoid_gate(const Tensor& x, const Tensor& gate, Tensor& y) {
  const uint16_t* xp = bf16_ptr(x);
  const uint16_t* g = bf16_ptr(gate);
  uint16_t* o = bf16_ptr_mut(y);
  parallel_for(x.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float s = round_bf16(sigmoid32(ld(g, i)));  // torch.sigmoid on bf16 rounds
      o[i] = st(ld(xp, i) * s);
    }
  }, 1 << 13);
}

void split_query_gate(const Tensor& qg, Tensor& query, Tensor& gate) {
  int64_t T = query.dim(0), heads = query.dim(1), d = query.dim(2);
  const uint16_t* src = bf16_ptr(qg);
  uint16_t* q = bf16_ptr_mut(query);
  uint16_t* g = bf16_ptr_mut(gate);
  parallel_for(T * heads, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      std::memcpy(q + r * d, src + r * 2 * d, d * sizeof(uint16_t));
      std::memcpy(g + r * d, src + r * 2 * d + d, d * sizeof(uint16_t));
    }
  }, 64);
}

}  // namespace tf::cpu
