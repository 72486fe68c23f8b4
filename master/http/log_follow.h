// GET /v1/jobs/{id}/logs?follow=true: a task's output as it grows, as an event stream
// (text/event-stream), so that a notebook or `curl -N` shows a running job's output live. Each
// `output` event carries what JobLogsResponse carries (the new bytes, base64, at their offset);
// an `attempt` event says a new attempt of the task started (its output starts again at 0);
// the `end` event comes once the job ended and its output is all sent; an `error` event carries
// a refusal (one line, as the logs route gives it) and ends the stream. Until the task starts,
// or while its node cannot be reached, the stream waits. It asks for more every `poll_ms` on the
// injected clock (at once while there is more than a read gives), never while the client has
// not taken what was sent (kMaxBacklogBytes): one follow costs at most a read a second. A
// comment line goes out every kKeepaliveMs of silence, so that clients and proxies keep it open.
// Thread contract: everything on the io thread.
#pragma once

#include <functional>
#include <memory>

#include "common/base/clock.h"
#include "common/base/status.h"
#include "common/rpc/asio.h"
#include "common/rpc/clock_timer.h"
#include "master/http/http_server.h"
#include "proto/job.pb.h"

namespace snn {

class LogFollow : public std::enable_shared_from_this<LogFollow> {
 public:
  // Reads the logs as the follower's user would (the logs route's own handler).
  using Read = std::function<void(const v1::JobLogsRequest&,
                                  std::function<void(const Status&, const v1::JobLogsResponse*)>)>;
  static constexpr int64_t kPollMs = 1000;
  static constexpr size_t kMaxBacklogBytes = 1 << 20;
  static constexpr int64_t kKeepaliveMs = 15000;  // a comment line while nothing else comes

  LogFollow(asio::io_context& io, const Clock& clock, std::shared_ptr<HttpStream> stream,
            v1::JobLogsRequest request, Read read);
  void Start();

 private:
  void Fetch();
  void Got(const Status& status, const v1::JobLogsResponse* logs);
  void Later(int64_t delay_ms);
  void Send(const std::string& event, const std::string& json);

  const Clock& clock_;
  std::shared_ptr<HttpStream> stream_;
  v1::JobLogsRequest request_;
  Read read_;
  ClockTimer timer_;
  uint32_t attempt_ = 0;
  bool started_ = false;
  int64_t sent_ms_ = 0;  // when something was last sent
};

}  // namespace snn
