#pragma once
// CUDA graphs as the rest of TensorFold sees them (plain C++, no CUDA headers): the work a
// function queues on the runtime's stream, captured once and replayed with one launch.
#include <functional>
#include <memory>

namespace tf::cuda {

class Graph;

// Captures what `work` queues on the stream (nothing runs); a failure inside ends the capture and
// rethrows. The work must not wait for the GPU (no host copies, no synchronisation).
std::shared_ptr<Graph> capture_graph(const std::function<void()>& work);

// Queues one replay of the captured work on the stream.
void launch_graph(const Graph& g);

}  // namespace tf::cuda
