// The forecast worker: tasks run in turn on a thread of their own, and each continuation is
// posted back (here: to a queue the test drains, standing in for the io thread).
#include "master/jobs/forecast_worker.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace snn {
namespace {

TEST(ForecastWorkerTest, TasksRunInTurnOffTheCallersThreadAndContinuationsComeBack) {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> posted;
  ForecastWorker worker([&](std::function<void()> fn) {
    std::lock_guard<std::mutex> lock(mu);
    posted.push_back(std::move(fn));
    cv.notify_all();
  });
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<int> order;  // written by continuations only, on this thread
  bool off_thread = true;
  for (int i = 0; i < 3; ++i) {
    worker.Run([&, i]() -> std::function<void()> {
      const bool elsewhere = std::this_thread::get_id() != caller;
      return [&, i, elsewhere] {
        off_thread = off_thread && elsewhere;
        order.push_back(i);
      };
    });
  }
  for (int done = 0; done < 3; ++done) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return !posted.empty(); });
      fn = std::move(posted.front());
      posted.pop_front();
    }
    fn();
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(off_thread);
}

TEST(ForecastWorkerTest, AWorkerThatNeverRanATaskStopsAtOnce) {
  ForecastWorker worker([](std::function<void()>) {});
}

}  // namespace
}  // namespace snn
