#include "master/http/log_follow.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "common/base/proto_json.h"

namespace snn {
namespace {

bool Ended(v1::JobState state) {
  return state == v1::COMPLETED || state == v1::FAILED || state == v1::CANCELLED ||
         state == v1::TIMEOUT;
}

// {"error": "...", "code": "NOT_FOUND"}, as the API's refusals are.
std::string ErrorJson(const Status& status) {
  google::protobuf::Value message;
  message.set_string_value(status.message());
  std::string quoted;
  (void)google::protobuf::util::MessageToJsonString(message, &quoted);
  std::string code = CodeName(status.code());
  for (char& c : code) c = c == ' ' ? '_' : static_cast<char>(std::toupper(c));
  return "{\"error\": " + quoted + ", \"code\": \"" + code + "\"}";
}

}  // namespace

LogFollow::LogFollow(asio::io_context& io, const Clock& clock, std::shared_ptr<HttpStream> stream,
                     v1::JobLogsRequest request, Read read)
    : clock_(clock),
      stream_(std::move(stream)),
      request_(std::move(request)),
      read_(std::move(read)),
      timer_(io, clock) {}

void LogFollow::Start() {
  // The stream holds the follow (and its timer) until the client goes.
  auto self = shared_from_this();
  stream_->set_on_close([self] { self->timer_.Cancel(); });
  sent_ms_ = clock_.NowMs();
  Fetch();
}

void LogFollow::Fetch() {
  if (stream_->closed()) return;
  if (stream_->backlog_bytes() > kMaxBacklogBytes) return Later(kPollMs);
  read_(request_,
        [self = shared_from_this()](const Status& status, const v1::JobLogsResponse* logs) {
          self->Got(status, logs);
        });
}

void LogFollow::Got(const Status& status, const v1::JobLogsResponse* logs) {
  if (stream_->closed()) return;
  if (!status.ok() || logs == nullptr) {
    // Not started yet, or its node is away for now: wait for it.
    if (status.code() == Code::kFailedPrecondition || status.code() == Code::kUnavailable) {
      return Later(kPollMs);
    }
    Send("error", ErrorJson(status.ok() ? Internal("no answer") : status));
    return stream_->End();
  }
  if (started_ && logs->attempt() != attempt_) {
    // A new attempt: its output starts again.
    attempt_ = logs->attempt();
    request_.set_offset(0);
    Send("attempt", "{\"attempt\": " + std::to_string(attempt_) + "}");
    return Fetch();
  }
  started_ = true;
  attempt_ = logs->attempt();
  if (!logs->data().empty()) {
    Send("output", ToJsonLine(*logs));
    request_.set_offset(logs->offset() + logs->data().size());
  }
  if (request_.offset() < logs->size()) return Fetch();  // more than one read gave
  if (Ended(logs->state()) && logs->data().empty()) {
    Send("end", "{\"state\": \"" + v1::JobState_Name(logs->state()) + "\"}");
    return stream_->End();
  }
  if (clock_.NowMs() - sent_ms_ >= kKeepaliveMs) {
    stream_->Send(": keepalive\n\n");
    sent_ms_ = clock_.NowMs();
  }
  Later(Ended(logs->state()) ? 0 : kPollMs);
}

void LogFollow::Later(int64_t delay_ms) {
  timer_.WaitMs(delay_ms, [self = shared_from_this()](bool expired) {
    if (expired) self->Fetch();
  });
}

void LogFollow::Send(const std::string& event, const std::string& json) {
  stream_->Send("event: " + event + "\ndata: " + json + "\n\n");
  sent_ms_ = clock_.NowMs();
}

}  // namespace snn
