#include "master/http/rest_api.h"

#include <glog/logging.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <charconv>

#include "common/base/duration.h"
#include "common/base/proto_json.h"
#include "common/base/split.h"
#include "common/identity/pki.h"
#include "common/model/model_fit.h"
#include "common/rpc/rpc_methods.h"
#include "master/auth/access_policy.h"
#include "master/http/log_follow.h"
#include "master/http/multipart.h"
#include "master/http/openapi.h"
#include "master/http/rest_request.h"
#include "master/http/web_page.h"

namespace snn {
namespace {

constexpr int64_t kUserCacheMs = 60000;
constexpr uint64_t kMaxWaitS = 300;
constexpr size_t kMaxImports = 2;  // uploads' models being read or waiting to be, in all

int HttpStatusOf(Code code) {
  switch (code) {
    case Code::kOk:
      return 200;
    case Code::kInvalidArgument:
      return 400;
    case Code::kUnauthenticated:
      return 401;
    case Code::kPermissionDenied:
      return 403;
    case Code::kNotFound:
      return 404;
    case Code::kAlreadyExists:
    case Code::kFailedPrecondition:
      return 409;
    case Code::kResourceExhausted:
      return 429;
    case Code::kUnavailable:
    case Code::kNotLeader:
      return 503;
    case Code::kDeadlineExceeded:
      return 504;
    case Code::kInternal:
      break;
  }
  return 500;
}

std::string CodeTag(Code code) {
  std::string tag = CodeName(code);
  for (char& c : tag) {
    c = c == ' ' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return tag;
}

std::string Quote(const std::string& text) {
  google::protobuf::Value value;
  value.set_string_value(text);
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(value, &out);
  return out;
}

// Where the router's answer goes: JSON, with an ETag on reads.
class HttpSink : public ReplySink {
 public:
  // `hold`, if set, is shown a good answer and its ETag first; when it returns true, it answers
  // later itself (a long poll).
  using Hold = std::function<bool(const google::protobuf::Message&, const std::string& etag)>;
  HttpSink(std::shared_ptr<HttpReply> reply, std::string peer, bool read, std::string if_none_match,
           Hold hold = nullptr)
      : reply_(std::move(reply)),
        peer_(std::move(peer)),
        read_(read),
        if_none_match_(std::move(if_none_match)),
        hold_(std::move(hold)) {}

  // The router holds its answer's sink weakly (a connection lives by its own I/O); an exchange
  // lives until it is answered.
  void KeepUntilAnswered(std::shared_ptr<HttpSink> self) { self_ = std::move(self); }

  void Reply(uint64_t, const Status& status, const google::protobuf::Message* response) override {
    auto keep = std::move(self_);
    if (!status.ok() || response == nullptr) {
      reply_->Respond(ErrorResponse(status.ok() ? Internal("no answer") : status));
      return;
    }
    HttpResponse out;
    out.body = ToJson(*response) + "\n";
    if (read_) {
      const std::string etag = "\"" + pki::Sha256Hex(out.body).substr(0, 32) + "\"";
      if (hold_ && hold_(*response, etag)) return;
      out.headers["ETag"] = etag;
      if (if_none_match_ == etag) {
        out.status = 304;
        out.body.clear();
      }
    }
    reply_->Respond(std::move(out));
  }
  const std::string& peer() const override { return peer_; }

 private:
  std::shared_ptr<HttpReply> reply_;
  std::string peer_;
  const bool read_;
  const std::string if_none_match_;
  Hold hold_;
  std::shared_ptr<HttpSink> self_;
};

// An answer the REST layer uses itself (an upload's pool status, then its submit).
class CallSink : public ReplySink {
 public:
  using Answer = std::function<void(const Status&, const google::protobuf::Message*)>;
  CallSink(std::string peer, Answer then) : peer_(std::move(peer)), then_(std::move(then)) {}
  void KeepUntilAnswered(std::shared_ptr<CallSink> self) { self_ = std::move(self); }
  void Reply(uint64_t, const Status& status, const google::protobuf::Message* response) override {
    auto keep = std::move(self_);
    if (then_) std::exchange(then_, nullptr)(status, response);
  }
  const std::string& peer() const override { return peer_; }

 private:
  std::string peer_;
  Answer then_;
  std::shared_ptr<CallSink> self_;
};

}  // namespace

HttpResponse ErrorResponse(const Status& status) {
  HttpResponse out;
  out.status = HttpStatusOf(status.code());
  out.body = "{\"error\": " + Quote(status.message()) + ", \"code\": \"" + CodeTag(status.code()) +
             "\"}\n";
  if (status.code() == Code::kUnauthenticated) out.headers["WWW-Authenticate"] = "Bearer";
  if (status.code() == Code::kResourceExhausted) out.headers["Retry-After"] = "1";
  return out;
}

RestApi::RestApi(asio::io_context& io, const Clock& clock, RestApiHooks hooks,
                 ModelUploadConfig uploads)
    : io_(io), clock_(clock), hooks_(std::move(hooks)), uploads_(std::move(uploads)) {}

RestApi::~RestApi() {
  workers_.stop();
  workers_.join();
  importers_.stop();
  importers_.join();
}

bool RestApi::IsUpload(const HttpRequest& head) {
  const std::string path = head.target.substr(0, head.target.find('?'));
  return head.method == "POST" && (path == "/v1/jobs" || path == "/v1/models") &&
         IsMultipartForm(head.Header("content-type"));
}

void RestApi::Call(const std::string& method, const google::protobuf::Message& request,
                   const Identity& who, const std::string& tenant, const std::string& peer,
                   Answer then) {
  v1::Envelope envelope;
  envelope.set_id(next_id_++);
  envelope.set_method(method);
  envelope.set_payload(request.SerializeAsString());
  envelope.mutable_credential()->set_tenant(tenant);
  auto sink = std::make_shared<CallSink>(peer, std::move(then));
  sink->KeepUntilAnswered(sink);
  hooks_.dispatch(sink, std::move(envelope), who);
}

void RestApi::ReadUpload(HttpRequest request, const std::shared_ptr<HttpReply>& reply) {
  auto target = ParseTarget(request.target);
  if (!target.ok()) return reply->Respond(ErrorResponse(target.status()));
  // ?tenant= is Snn-Tenant, as on every route; nothing else is taken.
  std::string tenant = request.Header("snn-tenant");
  for (const auto& [key, value] : target->query) {
    if (key != "tenant") {
      return reply->Respond(ErrorResponse(InvalidArgument(
          "unknown parameter '" + key.substr(0, 64) + "' (a form upload takes tenant)")));
    }
    tenant = value;
  }
  const std::string peer = request.peer;
  const std::string content_type = request.Header("content-type");
  const bool model_only = target->path == "/v1/models";
  Authenticate(request, reply, [=, this, body = std::move(request.body)](Identity who) mutable {
    if (importing_.count(who.uid) > 0 || importing_.size() >= kMaxImports) {
      return reply->Respond(ErrorResponse(Status(
          Code::kResourceExhausted,
          importing_.count(who.uid) > 0
              ? "a model of yours is being read: send the next upload when it is answered"
              : "the master is reading too many uploaded models at once: try again in a moment")));
    }
    importing_.insert(who.uid);
    asio::post(importers_, [=, this, body = std::move(body)]() mutable {
      if (model_only) {
        // POST /v1/models: the model as JSON, with what was assumed.
        auto model = uploads_.Import(content_type, body);
        std::string().swap(body);
        HttpResponse out;
        if (model.ok()) {
          google::protobuf::ListValue notes;
          if (!model->note.empty()) notes.add_values()->set_string_value(model->note);
          out.body =
              "{\"model\": " + ToJson(model->model) + ", \"notes\": " + ToJson(notes) + "}\n";
        }
        auto answer = std::make_shared<HttpResponse>(model.ok() ? std::move(out)
                                                                : ErrorResponse(model.status()));
        return asio::post(io_, [=, this] {
          importing_.erase(who.uid);
          reply->Respond(std::move(*answer));
        });
      }
      auto job = std::make_shared<Result<UploadedJob>>(uploads_.Read(content_type, body));
      std::string().swap(body);  // the upload's bytes go before the answer is queued
      asio::post(io_, [=, this] {
        importing_.erase(who.uid);
        if (!job->ok()) return reply->Respond(ErrorResponse(job->status()));
        FitAndSubmit(std::make_shared<UploadedJob>(std::move(**job)), who, tenant, peer, reply);
      });
    });
  });
}

void RestApi::FitAndSubmit(std::shared_ptr<UploadedJob> job, const Identity& who,
                           const std::string& tenant, const std::string& peer,
                           const std::shared_ptr<HttpReply>& reply) {
  // The cores a model needs depend on the boards it may use: as its user sees the pool.
  Call(std::string(rpc::kPoolStatus.name), v1::PoolStatusRequest(), who, tenant, peer,
       [=, this](const Status& status, const google::protobuf::Message* answer) {
         if (!status.ok() || answer == nullptr) {
           return reply->Respond(ErrorResponse(status.ok() ? Internal("no answer") : status));
         }
         v1::JobSpec& spec = job->spec;
         auto npc = NeuronsPerCoreOf(static_cast<const v1::PoolStatusResponse&>(*answer),
                                     spec.task().resources().board_type(),
                                     spec.pool().empty() ? "default" : spec.pool());
         if (!npc.ok()) return reply->Respond(ErrorResponse(npc.status()));
         Status fit = FitModelToJob(std::move(job->model), *npc, kDefaultInputRateHz, spec);
         if (!fit.ok()) return reply->Respond(ErrorResponse(fit));
         v1::SubmitRequest submit;
         *submit.mutable_spec() = std::move(spec);
         Call(std::string(rpc::kJobSubmit.name), submit, who, tenant, peer,
              [reply, note = job->note](const Status& s, const google::protobuf::Message* a) {
                if (!s.ok() || a == nullptr) {
                  return reply->Respond(ErrorResponse(s.ok() ? Internal("no answer") : s));
                }
                v1::SubmitResponse out;
                out.CopyFrom(*a);
                if (!note.empty()) out.add_notes(note);
                HttpResponse response;
                response.body = ToJson(out) + "\n";
                reply->Respond(std::move(response));
              });
       });
}

Result<std::string> RestApi::OwnerOf(const HttpRequest& head) const {
  const std::string header = head.Header("authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (header.compare(0, kBearer.size(), kBearer) != 0) return std::string();
  auto token = hooks_.check_token(header.substr(kBearer.size()));
  if (!token.ok()) return token.status();
  return "uid " + std::to_string(token->uid());
}

void RestApi::Authenticate(const HttpRequest& request, const std::shared_ptr<HttpReply>& reply,
                           std::function<void(Identity)> then) {
  const std::string header = request.Header("authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (header.compare(0, kBearer.size(), kBearer) != 0) {
    return reply->Respond(ErrorResponse(Unauthenticated(
        "this API needs a token: send 'Authorization: Bearer TOKEN' (snnctl token create "
        "makes one)")));
  }
  auto token = hooks_.check_token(header.substr(kBearer.size()));
  if (!token.ok()) return reply->Respond(ErrorResponse(token.status()));
  const int64_t now = clock_.NowMs();
  auto it = users_.find(token->uid());
  if (it != users_.end() && now - it->second.resolved_ms < kUserCacheMs) {
    Identity who = it->second.identity;
    who.role = hooks_.role_of(who);
    return then(std::move(who));
  }
  Identity who;
  who.kind = Identity::Kind::kUser;
  who.uid = token->uid();
  who.gid = token->gid();
  asio::post(workers_, [this, who, user = token->user(), then = std::move(then), now]() mutable {
    ResolveUser(who);  // NSS may block: here, not on the io thread
    if (who.user.empty()) who.user = user;
    asio::post(io_, [this, who = std::move(who), then = std::move(then), now]() mutable {
      users_[who.uid] = Known{who, now};
      who.role = hooks_.role_of(who);
      then(std::move(who));
    });
  });
}

void RestApi::Handle(HttpRequest request, std::shared_ptr<HttpReply> reply) {
  auto target = ParseTarget(request.target);
  if (!target.ok()) return reply->Respond(ErrorResponse(target.status()));
  if (request.method == "GET" && target->path == "/v1/openapi.json") {
    return reply->Respond(HttpResponse{200, "application/json", OpenApiDocument(), {}});
  }
  if (request.method == "GET") {
    auto page = ServeWebPage(target->path, request.Header("if-none-match"));
    if (page) return reply->Respond(*std::move(page));
  }
  if (target->path == "/v1/events") return Events(request, *target, reply);
  if (IsUpload(request)) return ReadUpload(std::move(request), reply);
  if (target->path == "/v1/models") {
    return reply->Respond(ErrorResponse(InvalidArgument(
        "POST /v1/models takes a form upload (multipart/form-data) of the part 'model' (a NIR or "
        "JSON model file), with 'model_step_ms' and 'model_reset' if you give them")));
  }
  auto match = MatchRoute(request.method, target->path);
  if (!match.ok()) {
    HttpResponse out = ErrorResponse(match.status());
    if (match.status().code() == Code::kFailedPrecondition) out.status = 405;
    return reply->Respond(std::move(out));
  }
  // ?wait=DURATION on a job: a long poll (see the header).
  int64_t wait_ms = 0;
  if (auto wait = target->query.find("wait"); wait != target->query.end()) {
    if (match->route->method != rpc::kJobShow.name) {
      return reply->Respond(ErrorResponse(
          InvalidArgument("wait= is for GET /v1/jobs/{id} (or watch GET /v1/events)")));
    }
    auto seconds = ParseDurationSeconds(wait->second);
    if (!seconds.ok() || *seconds > kMaxWaitS) {
      return reply->Respond(ErrorResponse(
          InvalidArgument("wait must be a duration of 1s to " + FormatDurationUnit(kMaxWaitS) +
                          ", not '" + wait->second.substr(0, 32) + "'")));
    }
    wait_ms = static_cast<int64_t>(*seconds) * 1000;
  }
  // ?follow=true on a task's logs: its output as it grows (master/http/log_follow.h).
  const bool follow = target->query.count("follow") > 0;
  if (follow && (match->route->method != rpc::kJobLogs.name ||
                 target->query.find("follow")->second != "true")) {
    return reply->Respond(ErrorResponse(InvalidArgument(
        "follow=true is for GET /v1/jobs/{id}/logs (a task's output as it grows)")));
  }
  const bool read = request.method == "GET";
  const std::string if_none_match = request.Header("if-none-match");
  const std::string tenant = request.Header("snn-tenant");
  const std::string peer = request.peer;
  const std::string method = match->route->method;
  Authenticate(
      request, reply,
      [=, this, match = *std::move(match), target = *std::move(target),
       body = std::move(request.body)](Identity who) mutable {
        const bool has_body = !body.empty();
        // A body is parsed (JSON, YAML: up to 1 MiB) on the worker, never on the io thread, and
        // only once its sender is known.
        auto build = [match = std::move(match), target = std::move(target),
                      body = std::move(body)] {
          return BuildRequest(match, target, body, {"wait", "follow"});
        };
        auto go = [=, this](Result<std::unique_ptr<google::protobuf::Message>> message) {
          if (!message.ok()) return reply->Respond(ErrorResponse(message.status()));
          v1::Envelope envelope;
          envelope.set_id(next_id_++);
          envelope.set_method(method);
          envelope.set_payload((*message)->SerializeAsString());
          envelope.mutable_credential()->set_tenant(tenant);
          if (follow) {
            auto read = [=, this](const v1::JobLogsRequest& logs, auto then) {
              Call(std::string(rpc::kJobLogs.name), logs, who, tenant, peer,
                   [then](const Status& s, const google::protobuf::Message* answer) {
                     then(s, static_cast<const v1::JobLogsResponse*>(answer));
                   });
            };
            return std::make_shared<LogFollow>(io_, clock_, reply->OpenStream(),
                                               static_cast<const v1::JobLogsRequest&>(**message),
                                               std::move(read))
                ->Start();
          }
          if (wait_ms > 0) {
            auto poll = std::make_shared<Poll>(
                Poll{envelope, who, if_none_match, if_none_match, clock_.NowMs() + wait_ms});
            return LongPoll(poll, reply, peer);
          }
          auto sink = std::make_shared<HttpSink>(reply, peer, read, if_none_match);
          sink->KeepUntilAnswered(sink);
          hooks_.dispatch(sink, envelope, who);
        };
        if (!has_body) return go(build());
        asio::post(workers_, [this, build = std::move(build), go = std::move(go)]() mutable {
          auto message =
              std::make_shared<Result<std::unique_ptr<google::protobuf::Message>>>(build());
          asio::post(io_, [go = std::move(go), message] { go(std::move(*message)); });
        });
      });
}

void RestApi::LongPoll(const std::shared_ptr<Poll>& poll, const std::shared_ptr<HttpReply>& reply,
                       const std::string& peer) {
  auto hold = [=, this](const google::protobuf::Message& answer, const std::string& etag) {
    // Without If-None-Match, the first answer is what the client holds.
    if (poll->etag.empty()) poll->etag = etag;
    // Changed, or the wait is over: answer (304 if still what If-None-Match names).
    if (etag != poll->etag || clock_.NowMs() >= poll->deadline_ms) return false;
    // Else read again at the job's next durable write, or at the deadline.
    const uint64_t job = static_cast<const v1::ShowJobResponse&>(answer).job().id();
    Status waiting = hooks_.events->WaitForJob(job, poll->deadline_ms, [=, this] {
      if (!reply->abandoned()) LongPoll(poll, reply, peer);
    });
    if (!waiting.ok()) reply->Respond(ErrorResponse(waiting));
    return true;
  };
  v1::Envelope envelope = poll->envelope;
  envelope.set_id(next_id_++);
  auto sink = std::make_shared<HttpSink>(reply, peer, true, poll->if_none_match, hold);
  sink->KeepUntilAnswered(sink);
  hooks_.dispatch(sink, std::move(envelope), poll->who);
}

void RestApi::Events(const HttpRequest& request, const HttpTarget& target,
                     const std::shared_ptr<HttpReply>& reply) {
  if (request.method != "GET") {
    HttpResponse out = ErrorResponse(FailedPrecondition(
        request.method.substr(0, 16) + " is not allowed on /v1/events (it takes GET)"));
    out.status = 405;
    return reply->Respond(std::move(out));
  }
  uint64_t since = 0;
  bool jobs = true, nodes = true;
  std::string last = request.Header("last-event-id");
  for (const auto& [key, value] : target.query) {
    if (key == "since") {
      last = value;
    } else if (key == "types") {
      jobs = nodes = false;
      for (const auto& type : SplitList(value)) {
        if (type == "job") {
          jobs = true;
        } else if (type == "node") {
          nodes = true;
        } else {
          return reply->Respond(ErrorResponse(InvalidArgument(
              "types is a list of job and node, not '" + type.substr(0, 32) + "'")));
        }
      }
    } else {
      return reply->Respond(ErrorResponse(InvalidArgument(
          "unknown parameter '" + key.substr(0, 64) + "' (GET /v1/events takes since, types)")));
    }
  }
  if (!last.empty()) {
    auto [end, ec] = std::from_chars(last.data(), last.data() + last.size(), since);
    if (ec != std::errc() || end != last.data() + last.size()) {
      return reply->Respond(ErrorResponse(
          InvalidArgument("since (or Last-Event-ID) must be an event's revision, not '" +
                          last.substr(0, 32) + "'")));
    }
  }
  Authenticate(request, reply, [=, this](Identity who) {
    // What this watcher may see: every node event; a job's when it may read the job's tenant
    // (the answer for a tenant is kept a minute, as the user's groups are).
    struct Seen {
      std::unordered_map<std::string, bool> tenants;
      int64_t since_ms = 0;
    };
    auto seen = std::make_shared<Seen>();
    seen->since_ms = clock_.NowMs();
    auto filter = [=, this](const v1::Event& event) {
      if (event.has_node()) return nodes;
      if (!event.has_job() || !jobs) return false;
      if (clock_.NowMs() - seen->since_ms > kUserCacheMs) {
        seen->tenants.clear();
        seen->since_ms = clock_.NowMs();
      }
      auto [it, fresh] = seen->tenants.try_emplace(event.job().tenant(), false);
      if (fresh) it->second = hooks_.may_read(who, event.job().tenant());
      return it->second;
    };
    // One user's streams are bounded, and none outlives the token that opened it.
    int64_t until_ms = 0;
    const std::string header = request.Header("authorization");
    if (auto token = hooks_.check_token(header.substr(std::min<size_t>(header.size(), 7)));
        token.ok()) {
      until_ms = token->expires_ms();
    }
    auto stream = reply->OpenStream();
    Status watching =
        hooks_.events->Watch(stream, since, filter, "uid " + std::to_string(who.uid), until_ms);
    if (!watching.ok()) {
      stream->Send(": " + watching.message() + "\n\n");
      stream->Close();
    }
  });
}

}  // namespace snn
