#include "core/parallel.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tf {

namespace {

int g_threads = 0;

// A fixed pool: worker i runs block i of the current job.
class Pool {
 public:
  explicit Pool(int n) {
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i] { loop(i); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
      ++gen_;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void run(int blocks, const std::function<void(int)>& job) {
    std::unique_lock<std::mutex> l(m_);
    job_ = &job;
    blocks_ = blocks;
    pending_ = size() - 1;
    error_ = nullptr;
    ++gen_;
    l.unlock();
    cv_.notify_all();
    run_block(0);
    l.lock();
    done_.wait(l, [this] { return pending_ == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run_block(int i) {
    if (i >= blocks_) return;
    try {
      (*job_)(i);
    } catch (...) {
      std::lock_guard<std::mutex> l(m_);
      if (!error_) error_ = std::current_exception();
    }
  }
  void loop(int i) {
    uint64_t seen = 0;
    for (;;) {
      std::unique_lock<std::mutex> l(m_);
      cv_.wait(l, [&] { return gen_ != seen; });
      seen = gen_;
      if (stop_) return;
      l.unlock();
      run_block(i);
      l.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int blocks_ = 0, pending_ = 0;
  uint64_t gen_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

Pool& pool() {
  static Pool p(thread_count());
  return p;
}

std::mutex g_run_mutex;

}  // namespace

int thread_count() {
  if (g_threads > 0) return g_threads;
  if (const char* e = std::getenv("TF_THREADS")) {
    int v = std::atoi(e);
    if (v > 0) return g_threads = std::min(v, 256);
  }
  unsigned h = std::thread::hardware_concurrency();
  return g_threads = h ? static_cast<int>(std::min(h, 256u)) : 1;
}

void set_thread_count(int n) { g_threads = std::max(1, n); }

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  int64_t blocks = std::min<int64_t>(pool().size(), (n + grain - 1) / grain);
  if (blocks <= 1) {
    fn(0, n);
    return;
  }
  // Nested or concurrent calls run inline rather than deadlock on the pool.
  std::unique_lock<std::mutex> l(g_run_mutex, std::try_to_lock);
  if (!l.owns_lock()) {
    fn(0, n);
    return;
  }
  int64_t per = (n + blocks - 1) / blocks;
  std::function<void(int)> job = [&](int b) {
    int64_t s = b * per, e = std::min(n, s + per);
    if (s < e) fn(s, e);
  };
  pool().run(static_cast<int>(blocks), job);
}

}  // namespace tf
