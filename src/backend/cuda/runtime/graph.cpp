#include "backend/cuda/runtime/graph.h"

#include <string>

#include "backend/cuda/runtime/capture_arena.h"
#include "backend/cuda/runtime/check.h"
#include "core/error.h"

namespace tf::cuda {

class Graph {
 public:
  Graph(cudaGraphExec_t exec, void* arena) : exec_(exec), arena_(arena) {}
  ~Graph() {
    cudaGraphExecDestroy(exec_);
    device_free(arena_);  // stream-ordered: after the replays already queued
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  cudaGraphExec_t exec() const { return exec_; }

 private:
  cudaGraphExec_t exec_;
  void* arena_;
};

namespace {

// Makes `arena` the recording thread's for one capture.
struct ArenaScope {
  explicit ArenaScope(CaptureArena* arena) { current_capture_arena() = arena; }
  ~ArenaScope() { current_capture_arena() = nullptr; }
};

cudaGraph_t capture(const std::function<void()>& work) {
  TF_CUDA(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
  try {
    work();
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(stream(), &broken);  // the stream must leave capture mode either way
    if (broken) cudaGraphDestroy(broken);
    (void)cudaGetLastError();
    throw;
  }
  cudaGraph_t graph = nullptr;
  TF_CUDA(cudaStreamEndCapture(stream(), &graph));
  return graph;
}

}  // namespace

std::shared_ptr<Graph> capture_graph(const std::function<void()>& work) {
  // A first capture, dropped, plans the arena: the same work makes the same tensors in the same order.
  void* arena = nullptr;
  size_t arena_bytes = 0;
  if (dependent_launches()) {
    CaptureArena plan(nullptr, 0);
    {
      ArenaScope scope(&plan);
      cudaGraphDestroy(capture(work));
    }
    arena_bytes = plan.high_water();
    if (arena_bytes) arena = device_alloc(arena_bytes, "recorded work's tensors");
  }
  CaptureArena carve(static_cast<char*>(arena), arena_bytes);
  cudaGraph_t graph = nullptr;
  try {
    ArenaScope scope(arena ? &carve : nullptr);
    graph = capture(work);
    if (carve.live())
      fail("recorded work: " + std::to_string(carve.live()) + " tensors made while recording outlive it");
  } catch (...) {
    if (graph) cudaGraphDestroy(graph);
    device_free(arena);
    throw;
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t e = cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
  cudaGraphDestroy(graph);
  if (e != cudaSuccess) {
    device_free(arena);
    fail_cuda(e, "cudaGraphInstantiateWithFlags", __FILE__, __LINE__);
  }
  return std::make_shared<Graph>(exec, arena);
}

void launch_graph(const Graph& g) { TF_CUDA(cudaGraphLaunch(g.exec(), stream())); }

}  // namespace tf::cuda
