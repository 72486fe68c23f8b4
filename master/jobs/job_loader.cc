#include "master/jobs/job_loader.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "master/store/journal.h"

namespace snn {

Status LoadHotJobs(Store& store, const std::function<void(v1::JobRecord)>& restore) {
  constexpr size_t kChunk = 1024;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::vector<v1::JobRecord>> ready;  // guarded by mu
  bool done = false;                             // guarded by mu
  Status read_status;                            // the reader's; read after join
  std::thread reader([&] {
    std::vector<v1::JobRecord> chunk;
    chunk.reserve(kChunk);
    auto hand_over = [&](bool last) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!chunk.empty()) ready.push_back(std::move(chunk));
        done = last;
      }
      cv.notify_one();
      chunk = std::vector<v1::JobRecord>();
      chunk.reserve(kChunk);
    };
    Status corrupt;
    Status s = store.Scan(kJobKeyPrefix, "", [&](std::string_view key, std::string_view value) {
      v1::JobRecord& job = chunk.emplace_back();
      if (!job.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
        corrupt = Internal("corrupt job record " + std::string(key));
        chunk.pop_back();
        return false;
      }
      if (chunk.size() == kChunk) hand_over(false);
      return true;
    });
    read_status = s.ok() ? corrupt : s;
    hand_over(true);
  });
  while (true) {
    std::vector<v1::JobRecord> chunk;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return done || !ready.empty(); });
      if (ready.empty()) break;  // done, and everything handed over was restored
      chunk = std::move(ready.front());
      ready.pop_front();
    }
    for (auto& job : chunk) restore(std::move(job));
  }
  reader.join();
  return read_status;
}

}  // namespace snn
