// Fragmentation study: a 32x32 board with 2% dead cores takes a stream of random rectangular
// requests (1..8 x 1..8 cores, exponential lifetimes with mean 1), first come first served: the
// queue head waits until it fits. Both policies see exactly the same streams and dead cores.
//   saturated: every request is queued at time 0; utilization (busy share of live cores over
//              time) is how well the policy packs.
//   load 0.5:  Poisson arrivals offering half the live cores; of the requests that had to wait,
//              the share that was refused while the board had enough free cores in total
//              (external fragmentation), and the mean wait.
#include <algorithm>
#include <cstdio>
#include <queue>
#include <random>
#include <vector>

#include "common/base/rect_allocator.h"

namespace {

constexpr uint32_t kSide = 32;

struct Job {
  double arrival;
  uint32_t w, h;
  double lifetime;
};

struct Outcome {
  double utilization = 0;
  uint64_t jobs = 0, waited = 0, fragmented = 0;
  double total_wait = 0;
};

std::vector<Job> Stream(uint32_t seed, int n, double offered_load) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint32_t> side(1, 8);
  std::exponential_distribution<double> life(1.0);
  // Mean area 4.5^2 cores, mean lifetime 1: this rate offers `offered_load` of the live cores.
  const double rate = offered_load * kSide * kSide * 0.98 / (4.5 * 4.5);
  std::exponential_distribution<double> gap(rate > 0 ? rate : 1);
  std::vector<Job> jobs;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    if (offered_load > 0) t += gap(rng);
    jobs.push_back({t, side(rng), side(rng), life(rng)});
  }
  return jobs;
}

Outcome Simulate(const std::vector<Job>& jobs, uint32_t seed, snn::FitPolicy policy) {
  snn::CoreGrid grid(kSide, kSide);
  std::mt19937 rng(seed * 7919 + 1);
  while (grid.live_count() > kSide * kSide * 98 / 100) grid.SetDead(rng() % kSide, rng() % kSide);
  struct Running {
    double end;
    snn::Rect rect;
    bool operator>(const Running& o) const { return end > o.end; }
  };
  std::priority_queue<Running, std::vector<Running>, std::greater<Running>> running;
  Outcome out;
  double now = 0, busy_time = 0;
  size_t next_arrival = 0, head = 0;  // jobs [head, next_arrival) are queued
  std::vector<bool> fragmented(jobs.size(), false);
  auto advance_to = [&](double t) {
    busy_time += (t - now) * (grid.live_count() - grid.free_count());
    now = t;
  };
  while (head < jobs.size()) {
    // Start queued jobs in order while the head fits.
    while (head < next_arrival) {
      const Job& j = jobs[head];
      auto p = snn::PlaceCores(grid, snn::CoreRequest{0, j.w, j.h}, policy);
      if (!p) {
        if (grid.free_count() >= j.w * j.h) fragmented[head] = true;
        if (running.empty()) {  // can never fit on this board: drop it
          ++head;
          continue;
        }
        break;
      }
      grid.Occupy(p->rect);
      running.push({now + j.lifetime, p->rect});
      const double wait = now - j.arrival;
      ++out.jobs;
      out.total_wait += wait;
      if (wait > 0) {
        ++out.waited;
        out.fragmented += fragmented[head];
      }
      ++head;
    }
    const double next_end = running.empty() ? 1e300 : running.top().end;
    const double next_arr = next_arrival < jobs.size() ? jobs[next_arrival].arrival : 1e300;
    if (next_arr <= next_end && next_arrival < jobs.size()) {
      advance_to(next_arr);
      ++next_arrival;
    } else if (!running.empty()) {
      advance_to(next_end);
      grid.Release(running.top().rect);
      running.pop();
    } else {
      break;
    }
  }
  out.utilization = busy_time / (now * grid.live_count());
  return out;
}

}  // namespace

int main() {
  constexpr int kSeeds = 10, kJobs = 20000;
  const char* names[2] = {"first fit", "best fit"};
  std::printf("32x32 board, 2%% dead cores, %d seeds x %d requests of 1..8 x 1..8 cores\n\n",
              kSeeds, kJobs);
  std::printf("%-10s %24s %14s %26s %12s\n", "policy", "saturated utilization", "waited (0.5)",
              "waited with enough free", "mean wait");
  for (int p = 0; p < 2; ++p) {
    const auto policy = p ? snn::FitPolicy::kBestFit : snn::FitPolicy::kFirstFit;
    Outcome saturated, loaded;
    for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
      const Outcome s = Simulate(Stream(seed, kJobs, 0), seed, policy);
      const Outcome l = Simulate(Stream(seed, kJobs, 0.5), seed, policy);
      saturated.utilization += s.utilization / kSeeds;
      loaded.jobs += l.jobs;
      loaded.waited += l.waited;
      loaded.fragmented += l.fragmented;
      loaded.total_wait += l.total_wait;
    }
    std::printf("%-10s %24.3f %13.1f%% %18llu (%5.1f%%) %12.3f\n", names[p], saturated.utilization,
                100.0 * loaded.waited / loaded.jobs,
                static_cast<unsigned long long>(loaded.fragmented),
                100.0 * loaded.fragmented / std::max<uint64_t>(1, loaded.waited),
                loaded.total_wait / loaded.jobs);
  }
  return 0;
}
