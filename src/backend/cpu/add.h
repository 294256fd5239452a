#pragma once
#include "backend/add.h"

namespace tf::cpu {
void add(const Tensor& a, const Tensor& b, Tensor& y);
}
