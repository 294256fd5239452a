#pragma once
// Deterministic data parallelism: a range is split into fixed contiguous blocks, one per worker,
// so each output is computed by one thread in one order whatever the timing.
#include <cstdint>
#include <functional>

namespace tf {

int thread_count();  // TF_THREADS, else the hardware's cores
void set_thread_count(int n);

// Calls fn(begin, end) over [0, n) split into at most thread_count() blocks of at least `grain`.
void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

}  // namespace tf
