#include "master/http/event_hub.h"

#include <algorithm>

#include "common/base/job_validation.h"
#include "master/http/event_json.h"

namespace snn {
EventHub::EventHub(const Clock& clock, EventHubOptions options)
    : clock_(clock),
      options_(options),
      // A restarted master gives revisions above the last one it gave, as long as it gave fewer
      // than a thousand events per millisecond of its life on average.
      first_rev_(static_cast<uint64_t>(std::max<int64_t>(clock.NowMs(), 0)) * 1000 + 1),
      next_rev_(first_rev_) {}

std::optional<v1::Event> EventHub::JobChanged(const v1::JobRecord& job) {
  auto it = jobs_seen_.find(job.id());
  if (it != jobs_seen_.end() && it->second.state == job.state() &&
      it->second.attempt == job.attempt() && it->second.reason == job.reason()) {
    return std::nullopt;
  }
  if (IsTerminalState(job.state())) {
    jobs_seen_.erase(job.id());
  } else {
    jobs_seen_[job.id()] = Seen{job.state(), job.attempt(), job.reason()};
  }
  v1::Event event;
  v1::JobEvent* e = event.mutable_job();
  e->set_id(job.id());
  e->set_tenant(job.tenant());
  e->set_tenant_job_id(job.tenant_job_id());
  e->set_name(job.spec().name());
  e->set_user(job.spec().user());
  e->set_state(job.state());
  e->set_reason(job.reason());
  e->set_attempt(job.attempt());
  return event;
}

std::vector<v1::Event> EventHub::NodesChanged(const NodeRegistry& nodes) {
  std::vector<v1::Event> out;
  for (const auto& [name, entry] : nodes.nodes()) {
    v1::Event event;
    v1::NodeEvent* e = event.mutable_node();
    e->set_node(name);
    e->set_state(NodeStateText(entry));
    for (const auto& board : entry.record.boards()) {
      v1::BoardEvent* b = e->add_boards();
      b->set_index(board.index());
      b->set_state(BoardStateText(entry, board));
    }
    std::string text = e->SerializeAsString();
    auto& seen = nodes_seen_[name];
    if (seen == text) continue;
    seen = std::move(text);
    out.push_back(std::move(event));
  }
  return out;
}

std::string EventHub::Frame(const v1::Event& event) {
  const char* type = event.has_job() ? "job" : event.has_node() ? "node" : "reset";
  return "id: " + std::to_string(event.rev()) + "\nevent: " + type + "\ndata: " + EventJson(event) +
         "\n\n";
}

void EventHub::Send(Stream& stream, const std::string& frame) {
  if (stream.out->closed()) return;
  if (stream.out->backlog_bytes() > options_.max_backlog_bytes) {
    stream.out->Close();  // it resumes from the last revision it read
    return;
  }
  stream.out->Send(frame);
  stream.last_write_ms = clock_.NowMs();
}

void EventHub::Publish(v1::Event event) {
  event.set_rev(next_rev_++);
  event.set_time_ms(clock_.NowMs());
  std::string frame;  // formatted once, when a stream first wants it
  for (auto& stream : streams_) {
    if (stream.filter && !stream.filter(event)) continue;
    if (frame.empty()) frame = Frame(event);
    Send(stream, frame);
  }
  kept_.emplace_back(std::move(event), std::move(frame));
  if (kept_.size() > options_.keep) kept_.pop_front();
}

void EventHub::JobWritten(uint64_t job_id) {
  auto it = waits_.find(job_id);
  if (it == waits_.end()) return;
  auto waits = std::move(it->second);
  waits_.erase(it);
  waiting_ -= waits.size();
  for (auto& w : waits) w.wake();
}

Status EventHub::Watch(std::shared_ptr<HttpStream> stream, uint64_t since, Filter filter,
                       const std::string& owner, int64_t until_ms) {
  if (streams_.size() >= options_.max_watchers) {
    return Status(Code::kResourceExhausted,
                  std::to_string(streams_.size()) + " event streams are open; try again later");
  }
  if (!owner.empty()) {
    const size_t mine = std::count_if(streams_.begin(), streams_.end(), [&](const Stream& s) {
      return s.owner == owner && !s.out->closed();
    });
    if (mine >= options_.max_streams_per_owner) {
      return Status(Code::kResourceExhausted,
                    std::to_string(mine) + " event streams of " + owner +
                        " are open, the most one user may have: close one first");
    }
  }
  Stream s{std::move(stream), std::move(filter), clock_.NowMs(), owner, until_ms};
  // The stream starts with a comment, so that clients see it open before any event.
  s.out->Send(": snn events from revision " + std::to_string(last_rev()) + "\n\n");
  if (since != 0) {
    const uint64_t oldest = kept_.empty() ? next_rev_ : kept_.front().first.rev();
    if (since + 1 < oldest || since > last_rev() || since + 1 < first_rev_) {
      v1::Event reset;
      reset.set_rev(last_rev());
      reset.set_time_ms(clock_.NowMs());
      reset.set_reset(true);
      s.out->Send(Frame(reset));
    } else {
      for (auto& [event, frame] : kept_) {
        if (event.rev() <= since || (s.filter && !s.filter(event))) continue;
        if (frame.empty()) frame = Frame(event);
        s.out->Send(frame);
      }
    }
  }
  streams_.push_back(std::move(s));
  return Status::Ok();
}

Status EventHub::WaitForJob(uint64_t job_id, int64_t deadline_ms, std::function<void()> wake) {
  if (waiting_ >= options_.max_watchers) {
    return Status(Code::kResourceExhausted,
                  std::to_string(waiting_) + " long polls are waiting; try again later");
  }
  waits_[job_id].push_back(Wait{deadline_ms, std::move(wake)});
  ++waiting_;
  return Status::Ok();
}

void EventHub::Tick() {
  const int64_t now = clock_.NowMs();
  std::vector<std::function<void()>> due;
  for (auto it = waits_.begin(); it != waits_.end();) {
    auto& list = it->second;
    for (size_t i = 0; i < list.size();) {
      if (list[i].deadline_ms <= now) {
        due.push_back(std::move(list[i].wake));
        list[i] = std::move(list.back());
        list.pop_back();
        --waiting_;
      } else {
        ++i;
      }
    }
    it = list.empty() ? waits_.erase(it) : std::next(it);
  }
  for (auto& wake : due) wake();
  for (auto& stream : streams_) {
    if (!stream.out->closed() && stream.until_ms != 0 && now >= stream.until_ms) {
      stream.out->Send(
          ": the token of this stream has expired; reconnect with a valid one "
          "(Last-Event-ID resumes)\n\n");
      stream.out->Close();
      continue;
    }
    if (!stream.out->closed() && now - stream.last_write_ms >= options_.keepalive_ms) {
      Send(stream, ": keepalive\n\n");
    }
  }
  std::erase_if(streams_, [](const Stream& s) { return s.out->closed(); });
}

}  // namespace snn
