#include "backend/cuda/graph.h"

#include "backend/cuda/check.h"

namespace tf::cuda {

class Graph {
 public:
  explicit Graph(cudaGraphExec_t exec) : exec_(exec) {}
  ~Graph() { cudaGraphExecDestroy(exec_); }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  cudaGraphExec_t exec() const { return exec_; }

 private:
  cudaGraphExec_t exec_;
};

std::shared_ptr<Graph> capture_graph(const std::function<void()>& work) {
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
  cudaGraphExec_t exec = nullptr;
  const cudaError_t e = cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
  cudaGraphDestroy(graph);
  if (e != cudaSuccess) fail_cuda(e, "cudaGraphInstantiateWithFlags", __FILE__, __LINE__);
  return std::make_shared<Graph>(exec);
}

void launch_graph(const Graph& g) { TF_CUDA(cudaGraphLaunch(g.exec(), stream())); }

}  // namespace tf::cuda
