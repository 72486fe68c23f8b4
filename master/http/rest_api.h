// The HTTP API (docs/reference/http-api.md): turns an HTTP request into the RPC request of its
// route (master/http/rest_routes.h), dispatches it as the RPC server would, for the identity its
// bearer token stands for, and turns the answer into JSON. So a route needs the method's right,
// runs its handler and is refused with the same one-line message snnctl prints (as
// {"error": ..., "code": ...} with the matching HTTP status). GET answers carry an ETag and are
// 304 when If-None-Match names it. /v1/openapi.json is the API's OpenAPI 3.1 document.
// GET /v1/jobs/{id}?wait=30s is a long poll: it answers when the job differs from what
// If-None-Match names (at once if it already does; without one, at the job's next event), or at
// the end of the wait (304 when it names what is still so). GET /v1/events?since=REV streams
// the events the user may see (master/http/event_hub.h), resumable with Last-Event-ID.
// POST /v1/jobs as a form upload carries a job and its model (master/http/model_upload.h): the
// model is read on a worker of its own (one upload per user at a time, kMaxImports in all), the
// job's cores come from the boards it may use (the pool's status, as its user sees it), and it
// is submitted as snnctl would submit it. POST /v1/models (a form upload of a model alone) answers
// the model as JSON, read the same way: {"model": ..., "notes": [...]}.
// Thread contract: Handle on the io thread; user lookups (NSS may block) on a worker thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "common/base/clock.h"
#include "common/identity/identity.h"
#include "common/rpc/asio.h"
#include "common/rpc/reply_sink.h"
#include "master/http/event_hub.h"
#include "master/http/http_server.h"
#include "master/http/model_upload.h"
#include "master/http/rest_request.h"
#include "proto/access.pb.h"
#include "proto/rpc.pb.h"

namespace snn {

struct RestApiHooks {
  // Serves `envelope` for `who` as the RPC server would (a standby answers NotLeader).
  std::function<void(const std::shared_ptr<ReplySink>&, v1::Envelope, Identity)> dispatch;
  // Who a presented token stands for, or why it does not.
  std::function<Result<v1::AccessTokenRecord>(const std::string& token)> check_token;
  // The role of a user whose name and groups are known (the access policy's).
  std::function<Role(const Identity&)> role_of;
  // Whether the user may see every job of a tenant (the access policy's MayRead).
  std::function<bool(const Identity&, const std::string& tenant)> may_read;
  EventHub* events = nullptr;  // the master's
};

class RestApi {
 public:
  RestApi(asio::io_context& io, const Clock& clock, RestApiHooks hooks,
          ModelUploadConfig uploads = {});
  ~RestApi();

  void Handle(HttpRequest request, std::shared_ptr<HttpReply> reply);
  // The HTTP server's gate: whose token a request's head carries ("uid 1000"), "" when it carries
  // none, or why the token is refused. A map lookup: cheap enough for every request.
  Result<std::string> OwnerOf(const HttpRequest& head) const;
  // The HTTP server's gate: whether a request is a job's form upload
  // (HttpLimits::max_upload_bytes).
  static bool IsUpload(const HttpRequest& head);

 private:
  struct Known {
    Identity identity;
    int64_t resolved_ms = 0;
  };
  // Calls `then` on the io thread with the user `token` names (name and groups from NSS, cached
  // for a minute), or answers 401.
  void Authenticate(const HttpRequest& request, const std::shared_ptr<HttpReply>& reply,
                    std::function<void(Identity)> then);
  // A long poll on a job (GET /v1/jobs/{id}?wait=): reads it, and again at each of its durable
  // writes, until it differs from `etag` or the deadline passes.
  struct Poll {
    v1::Envelope envelope;
    Identity who;
    std::string if_none_match;  // as the client sent it
    std::string etag;           // what the client holds (its If-None-Match, or the first answer)
    int64_t deadline_ms;
  };
  void LongPoll(const std::shared_ptr<Poll>& poll, const std::shared_ptr<HttpReply>& reply,
                const std::string& peer);
  // GET /v1/events: the event stream (text/event-stream) of what this user may see.
  void Events(const HttpRequest& request, const HttpTarget& target,
              const std::shared_ptr<HttpReply>& reply);

  // POST /v1/jobs as a form upload: the model read on `importers_`, then FitAndSubmit; or
  // POST /v1/models: the model read, and answered.
  void ReadUpload(HttpRequest request, const std::shared_ptr<HttpReply>& reply);
  void FitAndSubmit(std::shared_ptr<UploadedJob> job, const Identity& who,
                    const std::string& tenant, const std::string& peer,
                    const std::shared_ptr<HttpReply>& reply);
  // Dispatches `request` as `method` for `who`; `then` gets the answer (on the io thread).
  using Answer = std::function<void(const Status&, const google::protobuf::Message*)>;
  void Call(const std::string& method, const google::protobuf::Message& request,
            const Identity& who, const std::string& tenant, const std::string& peer, Answer then);

  asio::io_context& io_;
  const Clock& clock_;
  RestApiHooks hooks_;
  const ModelUpload uploads_;
  std::set<uint32_t> importing_;     // uids whose upload's model is being read; io thread only
  std::map<uint32_t, Known> users_;  // by uid; io thread only
  uint64_t next_id_ = 1;
  asio::thread_pool importers_{1};  // reads uploaded models (runs snn-nir-import)
  asio::thread_pool workers_{1};    // last: joined first
};

// {"error": message, "code": "NOT_FOUND"} with the HTTP status that matches the code.
HttpResponse ErrorResponse(const Status& status);

}  // namespace snn
