#include "nodeagent/drivers/driver_pool.h"

namespace snn {

DriverPool::DriverPool(const Clock& clock, const std::map<std::string, BoardDriverConfig>& drivers,
                       const std::string& log_dir, std::string agent_name) {
  for (const auto& [name, config] : drivers) {
    auto worker = std::make_unique<Worker>();
    worker->config = config;
    DriverProcessOptions options;
    options.argv = config.command;
    options.log_file = log_dir + "/driver-" + name + ".log";
    options.agent = agent_name;
    worker->process = std::make_unique<DriverProcess>(clock, options);
    workers_[name] = std::move(worker);
  }
}

DriverPool::~DriverPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  queued_.notify_all();
  for (auto& [name, worker] : workers_) {
    if (worker->thread.joinable()) worker->thread.join();
  }
}

Status DriverPool::Start() {
  for (auto& [name, worker] : workers_) {
    if (Status s = worker->process->Start(); !s.ok()) {
      return Status(s.code(), "driver " + name + ": " + s.message());
    }
  }
  return Status::Ok();
}

void DriverPool::Serve(std::function<void()> wake) {
  wake_ = std::move(wake);
  for (auto& [name, worker] : workers_) {
    Worker* w = worker.get();
    if (!w->thread.joinable()) w->thread = std::thread([this, w] { Loop(*w); });
  }
}

const v1::DriverHelloReply& DriverPool::hello(const std::string& driver) const {
  return workers_.at(driver)->process->hello();
}

const BoardDriverConfig& DriverPool::config(const std::string& driver) const {
  return workers_.at(driver)->config;
}

Result<v1::DriverResponse> DriverPool::CallNow(const std::string& driver,
                                               v1::DriverRequest request) {
  return workers_.at(driver)->process->Call(std::move(request));
}

void DriverPool::Call(const std::string& driver, v1::DriverRequest request, Answer then) {
  {
    std::lock_guard lock(mu_);
    workers_.at(driver)->jobs.push_back(Job{std::move(request), std::move(then)});
  }
  queued_.notify_all();
}

void DriverPool::RunAnswers() {
  std::vector<std::function<void()>> done;
  {
    std::lock_guard lock(mu_);
    done.swap(done_);
  }
  for (auto& answer : done) answer();
}

void DriverPool::Loop(Worker& worker) {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      queued_.wait(lock, [&] { return stopping_ || !worker.jobs.empty(); });
      if (stopping_) return;
      job = std::move(worker.jobs.front());
      worker.jobs.pop_front();
    }
    auto answer = worker.process->Call(std::move(job.request));
    {
      std::lock_guard lock(mu_);
      done_.push_back([then = std::move(job.then), answer = std::move(answer)]() mutable {
        then(std::move(answer));
      });
    }
    if (wake_) wake_();
  }
}

}  // namespace snn
