#include "backend/device/recorded_work.h"

#include <string>

#include "backend/variants.h"
#include "core/error.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/runtime/graph.h"
#endif

namespace tf {

bool recording_supported(Device d) {
#ifdef TF_HAVE_CUDA
  return d == Device::CUDA && variant_is<Variant::cuda_graph>("on");
#else
  (void)d;
  return false;
#endif
}

RecordedWork RecordedWork::record(Device d, const std::function<void()>& work) {
  if (!recording_supported(d)) fail("recorded work: only CUDA records (TF_CUDA_GRAPH=off turns it off)");
  RecordedWork r;
  r.variants_ = variants::current();
#ifdef TF_HAVE_CUDA
  r.impl_ = std::static_pointer_cast<void>(cuda::capture_graph(work));
#else
  (void)work;
#endif
  return r;
}

bool RecordedWork::under_current_variants() const { return variants::current() == variants_; }

void RecordedWork::replay() const {
  if (!impl_) fail("recorded work: nothing recorded");
  if (!under_current_variants()) fail("recorded work: recorded under other kernel variants (backend/variants.h)");
#ifdef TF_HAVE_CUDA
  cuda::launch_graph(*std::static_pointer_cast<cuda::Graph>(impl_));
#endif
}

}  // namespace tf
