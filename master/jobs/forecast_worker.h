// One background thread for work that must not hold up the master's io thread (the start
// forecast): each task runs there in turn, and its continuation is posted back to the io thread.
// Tasks must touch nothing the io thread changes: they work on copies.
// Thread contract: Run from the io thread; continuations run on it.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace snn {

class ForecastWorker {
 public:
  using Post = std::function<void(std::function<void()>)>;
  explicit ForecastWorker(Post post_to_io) : post_(std::move(post_to_io)) {}
  ~ForecastWorker();
  ForecastWorker(const ForecastWorker&) = delete;
  ForecastWorker& operator=(const ForecastWorker&) = delete;

  // Runs `task` on the worker thread; then posts what it returns (a continuation) to the io
  // thread.
  void Run(std::function<std::function<void()>()> task);

 private:
  void Loop();

  const Post post_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<std::function<void()>()>> tasks_;
  bool stop_ = false;
  std::thread thread_;  // started with the first task
};

}  // namespace snn
