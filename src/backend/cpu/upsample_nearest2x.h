#pragma once
#include "backend/upsample_nearest2x.h"

namespace tf::cpu {
void upsample_nearest2x(const Tensor& x, Tensor& y);
}
