// A submit storm against a cluster's master (or HA group) from a thread of its own, for the
// high-availability tests and the failover benchmark: it remembers every acknowledged job and
// when, and checks afterwards that each is in the master's list exactly once.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "common/base/clock.h"
#include "tests/integration/cluster.h"

namespace snn::testing {

// Jobs that stay pending (they wait for job 1, which runs until cancelled).
inline v1::JobSpec StormJob(const std::string& name) {
  v1::JobSpec spec = ShellJob("true");
  spec.set_name(name);
  spec.add_after_ok(1);
  return spec;
}

// Submits jobs (named `prefix`N) back to back from its own thread until stopped, over a client
// `connect` makes (again after every failure); remembers each acknowledged job and when.
class SubmitStorm {
 public:
  using Connect = std::function<std::unique_ptr<RpcClient>()>;
  SubmitStorm(std::string prefix, Connect connect, std::function<void()> on_thread = {})
      : prefix_(std::move(prefix)), connect_(std::move(connect)), on_thread_(std::move(on_thread)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~SubmitStorm() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // name -> when it was acknowledged
  std::map<std::string, snn::MonotonicTime> acked() {
    std::lock_guard lock(mu_);
    return acked_;
  }
  size_t count() {
    std::lock_guard lock(mu_);
    return acked_.size();
  }
  snn::MonotonicTime last_ack() {
    std::lock_guard lock(mu_);
    return last_;
  }
  // The first acknowledgement after `t` by a master other than `not_by` (HOST:PORT; one in
  // flight from a master killed at `t` does not count). nullopt: none yet.
  std::optional<snn::MonotonicTime> FirstAckAfter(snn::MonotonicTime t,
                                                  const std::string& not_by = "") {
    std::lock_guard lock(mu_);
    std::optional<snn::MonotonicTime> first;
    for (const auto& [name, at] : acked_) {
      if (at > t && by_[name] != not_by && (!first || at < *first)) first = at;
    }
    return first;
  }

 private:
  void Run() {
    if (on_thread_) on_thread_();
    std::unique_ptr<RpcClient> client;
    for (int n = 0; !stop_; ++n) {
      if (!client) client = connect_();
      if (!client) {
        snn::SleepRealMs(20);
        continue;
      }
      v1::SubmitRequest req;
      *req.mutable_spec() = StormJob(prefix_ + std::to_string(n));
      auto resp = client->Call(rpc::kJobSubmit, req);
      if (!resp.ok()) {
        client.reset();  // an unknown outcome: not acknowledged, and never sent again
        continue;
      }
      std::lock_guard lock(mu_);
      last_ = snn::MonotonicNow();
      acked_[req.spec().name()] = last_;
      by_[req.spec().name()] = client->target();
    }
  }

  const std::string prefix_;
  Connect connect_;
  std::function<void()> on_thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::map<std::string, snn::MonotonicTime> acked_;  // guarded by mu_
  std::map<std::string, std::string> by_;            // the master that acknowledged; mu_
  snn::MonotonicTime last_;                          // guarded by mu_
  std::thread thread_;
};

// Every acknowledged job is in the master's list exactly once.
inline void ExpectEveryAckedJobOnce(TestCluster& cluster,
                                    const std::map<std::string, snn::MonotonicTime>& acked) {
  auto all = cluster.ListAll();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::map<std::string, int> seen;
  std::set<uint64_t> ids;
  for (const auto& job : all->jobs()) {
    ++seen[job.spec().name()];
    EXPECT_TRUE(ids.insert(job.id()).second) << "job id " << job.id() << " twice";
  }
  for (const auto& [name, at] : acked) {
    EXPECT_EQ(seen[name], 1) << name << " was acknowledged but is there " << seen[name] << " times";
  }
  for (const auto& [name, n] : seen) {
    if (name.rfind("storm", 0) == 0) {
      EXPECT_LE(n, 1) << name;
    }
  }
}

}  // namespace snn::testing
