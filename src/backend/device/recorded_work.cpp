#include "backend/device/recorded_work.h"

#include <string>

#include "core/env_switch.h"
#include "core/error.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/runtime/graph.h"
#endif

namespace tf {

bool recording_supported(Device d) {
#ifdef TF_HAVE_CUDA
  static const bool off = env_switch("TF_CUDA_GRAPH", {"1", "0"}) == "0";
  return d == Device::CUDA && !off;
#else
  (void)d;
  return false;
#endif
}

RecordedWork RecordedWork::record(Device d, const std::function<void()>& work) {
  if (!recording_supported(d)) fail("recorded work: only CUDA records (TF_CUDA_GRAPH=0 turns it off)");
  RecordedWork r;
#ifdef TF_HAVE_CUDA
  r.impl_ = std::static_pointer_cast<void>(cuda::capture_graph(work));
#else
  (void)work;
#endif
  return r;
}

void RecordedWork::replay() const {
  if (!impl_) fail("recorded work: nothing recorded");
#ifdef TF_HAVE_CUDA
  cuda::launch_graph(*std::static_pointer_cast<cuda::Graph>(impl_));
#endif
}

}  // namespace tf
