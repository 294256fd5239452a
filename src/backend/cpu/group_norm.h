#pragma once
#include "backend/group_norm.h"

namespace tf::cpu {
void group_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                Tensor& y);
}
