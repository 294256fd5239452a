#pragma once
#include "backend/attention_single_head.h"

namespace tf::cpu {
void attention_single_head(const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& o);
}
