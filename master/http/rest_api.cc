#include "master/http/rest_api.h"

#include <glog/logging.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "common/base/proto_json.h"
#include "common/identity/pki.h"
#include "master/auth/access_policy.h"
#include "master/http/openapi.h"
#include "master/http/rest_request.h"

namespace snn {
namespace {

constexpr int64_t kUserCacheMs = 60000;

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
  HttpSink(std::shared_ptr<HttpReply> reply, std::string peer, bool read, std::string if_none_match)
      : reply_(std::move(reply)),
        peer_(std::move(peer)),
        read_(read),
        if_none_match_(std::move(if_none_match)) {}

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
  std::shared_ptr<HttpSink> self_;
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

RestApi::RestApi(asio::io_context& io, const Clock& clock, RestApiHooks hooks)
    : io_(io), clock_(clock), hooks_(std::move(hooks)) {}

RestApi::~RestApi() {
  workers_.stop();
  workers_.join();
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
  auto match = MatchRoute(request.method, target->path);
  if (!match.ok()) {
    HttpResponse out = ErrorResponse(match.status());
    if (match.status().code() == Code::kFailedPrecondition) out.status = 405;
    return reply->Respond(std::move(out));
  }
  auto message = BuildRequest(*match, *target, request.body);
  if (!message.ok()) return reply->Respond(ErrorResponse(message.status()));
  v1::Envelope envelope;
  envelope.set_id(next_id_++);
  envelope.set_method(match->route->method);
  envelope.set_payload((*message)->SerializeAsString());
  envelope.mutable_credential()->set_tenant(request.Header("snn-tenant"));
  const bool read = request.method == "GET";
  auto sink =
      std::make_shared<HttpSink>(reply, request.peer, read, request.Header("if-none-match"));
  Authenticate(request, reply, [this, sink, envelope = std::move(envelope)](Identity who) mutable {
    sink->KeepUntilAnswered(sink);
    hooks_.dispatch(sink, std::move(envelope), std::move(who));
  });
}

}  // namespace snn
