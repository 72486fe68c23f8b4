#include "master/jobs/forecast_worker.h"

namespace snn {

ForecastWorker::~ForecastWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    tasks_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ForecastWorker::Run(std::function<std::function<void()>()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  }
  cv_.notify_one();
}

void ForecastWorker::Loop() {
  while (true) {
    std::function<std::function<void()>()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (stop_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    std::function<void()> then = task();
    std::lock_guard<std::mutex> lock(mu_);
    if (then && !stop_) post_(std::move(then));
  }
}

}  // namespace snn
