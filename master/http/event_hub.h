// The HTTP API's events (proto/event.proto), fanned out from one place: the master publishes each
// change once (a job's state, reason or attempt, once durable; a node's or board's state, seen at
// its tick), the hub numbers it, keeps the last `keep` events for watchers that resume, formats it
// once (when a stream first wants it: with no watcher, never), and writes it to every event
// stream whose filter passes it and wakes the long polls of its job. A watcher costs a filter call
// per event and nothing while nothing happens (but a keepalive comment every 15 s); one that does
// not read (over 1 MiB behind) is closed, and resumes from the last revision it saw. Thread
// contract: the master's io thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/base/clock.h"
#include "master/http/http_server.h"
#include "master/nodes/node_registry.h"
#include "proto/event.pb.h"
#include "proto/job.pb.h"

namespace snn {

struct EventHubOptions {
  size_t keep = 10000;                 // events kept for watchers that resume
  size_t max_backlog_bytes = 1 << 20;  // a stream this far behind is closed
  int64_t keepalive_ms = 15000;        // a comment on a quiet stream this often
  size_t max_watchers = 20000;         // streams and long polls, each
  size_t max_streams_per_owner = 32;   // one user's streams, from every address together
};

class EventHub {
 public:
  explicit EventHub(const Clock& clock, EventHubOptions options = {});

  // The event a job's new record makes, if it changed what watchers see.
  std::optional<v1::Event> JobChanged(const v1::JobRecord& job);
  // An event per node whose state, or whose boards' states, changed since the last look.
  std::vector<v1::Event> NodesChanged(const NodeRegistry& nodes);
  // Numbers `event`, keeps it and sends it to the watchers it concerns.
  void Publish(v1::Event event);
  // Job `job_id` was written durably: its long polls look again.
  void JobWritten(uint64_t job_id);

  using Filter = std::function<bool(const v1::Event&)>;
  // Sends `stream` the kept events after revision `since` (all of them after a reset event when
  // `since` is older than the oldest kept or not one this master gave; none when `since` is 0),
  // then every new event `filter` passes. ResourceExhausted when too many watch, or when `owner`
  // (a user, "" for none) has max_streams_per_owner open. A stream with `until_ms` (its token's
  // expiry) is closed then, saying why: a stream lives no longer than what let it open.
  Status Watch(std::shared_ptr<HttpStream> stream, uint64_t since, Filter filter,
               const std::string& owner = "", int64_t until_ms = 0);
  // Calls `wake` once: at the next durable write of job `job_id`, or once the clock passes
  // `deadline_ms`. ResourceExhausted (and no call) when too many wait.
  Status WaitForJob(uint64_t job_id, int64_t deadline_ms, std::function<void()> wake);
  // On the master's tick: expired waits, keepalives, streams gone.
  void Tick();

  uint64_t last_rev() const { return next_rev_ - 1; }
  size_t streams() const { return streams_.size(); }
  size_t waits() const { return waiting_; }

 private:
  struct Stream {
    std::shared_ptr<HttpStream> out;
    Filter filter;
    int64_t last_write_ms = 0;
    std::string owner;
    int64_t until_ms = 0;  // 0: no end of its own
  };
  struct Wait {
    int64_t deadline_ms;
    std::function<void()> wake;
  };
  struct Seen {
    v1::JobState state;
    uint32_t attempt;
    std::string reason;
  };
  static std::string Frame(const v1::Event& event);
  void Send(Stream& stream, const std::string& frame);

  const Clock& clock_;
  const EventHubOptions options_;
  uint64_t first_rev_;  // the first revision this master gives (above any earlier master's)
  uint64_t next_rev_;
  std::deque<std::pair<v1::Event, std::string>> kept_;  // with their frames, once formatted
  std::vector<Stream> streams_;
  std::unordered_map<uint64_t, std::vector<Wait>> waits_;  // by job id
  size_t waiting_ = 0;
  std::unordered_map<uint64_t, Seen> jobs_seen_;   // live jobs only
  std::map<std::string, std::string> nodes_seen_;  // node -> its event's text
};

}  // namespace snn
