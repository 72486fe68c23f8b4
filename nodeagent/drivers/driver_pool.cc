#include "nodeagent/drivers/driver_pool.h"

#include <glog/logging.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <optional>

namespace snn {
namespace {

void Signal(int eventfd) {
  const uint64_t one = 1;
  (void)!write(eventfd, &one, sizeof one);
}

}  // namespace

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
    worker->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    workers_[name] = std::move(worker);
  }
}

DriverPool::~DriverPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  for (auto& [name, worker] : workers_) Signal(worker->wake_fd);
  for (auto& [name, worker] : workers_) {
    if (worker->thread.joinable()) worker->thread.join();
    close(worker->wake_fd);
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
  Signal(workers_.at(driver)->wake_fd);
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
    std::optional<Job> job;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      if (!worker.jobs.empty()) {
        job = std::move(worker.jobs.front());
        worker.jobs.pop_front();
      }
    }
    if (!job) {  // wait for a job, or for the driver to die
      pollfd fds[2] = {{worker.wake_fd, POLLIN, 0}, {worker.process->exit_fd(), POLLIN, 0}};
      if (poll(fds, fds[1].fd >= 0 ? 2 : 1, -1) < 0) continue;
      uint64_t count = 0;
      (void)!read(worker.wake_fd, &count, sizeof count);
      if (fds[1].fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP)) != 0) {
        const Status s = worker.process->Revive();
        LOG(WARNING) << "board driver " << worker.process->hello().driver() << " exited"
                     << (s.ok() ? "; started again" : ": cannot start it again: " + s.message());
      }
      continue;
    }
    auto answer = worker.process->Call(std::move(job->request));
    {
      std::lock_guard lock(mu_);
      done_.push_back([then = std::move(job->then), answer = std::move(answer)]() mutable {
        then(std::move(answer));
      });
    }
    if (wake_) wake_();
  }
}

}  // namespace snn
