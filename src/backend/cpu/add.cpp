#include "backend/elementwise/add.h"

#include "core/parallel.h"

namespace tf::cpu {

void add(const Tensor& a, const Tensor& b, Tensor& y) {
  const float* ap = a.ptr<const float>();
  const float* bp = b.ptr<const float>();
  float* yp = y.ptr<float>();
  parallel_for(a.numel(), [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) yp[i] = ap[i] + bp[i];
  }, 1 << 16);
}

}  // namespace tf::cpu
