// Dispatches incoming requests to typed handlers by method name. Every method is registered with
// the right it needs, and a caller without it is refused before the request is parsed. A handler
// gets the parsed request and a Responder it calls exactly once, now or later (after a durable
// commit).
// Thread contract: Dispatch and Responder run on the connection's io_context thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "common/base/clock.h"
#include "common/identity/identity.h"
#include "common/rpc/connection.h"
#include "common/rpc/rpc_methods.h"

namespace snn {

struct CallContext {
  std::shared_ptr<Connection> connection;  // null when the call came over HTTP
  v1::Credential credential;  // as sent: the tenant asked for (claims are not identity)
  Identity identity;          // as verified
  std::string method;
  std::shared_ptr<ReplySink> sink;  // where the answer goes (the connection, or an HTTP exchange)

  // A handler's refusal (tenant, ownership): logged with the caller, then returned.
  Status Refuse(Status why) const;
};

// Hears of every answered request: its method, the answer's code, and the time from dispatch to
// answer (a durable write's wait included). On the io thread.
using RpcObserver = std::function<void(const std::string& method, Code code, double seconds)>;

template <typename Response>
class Responder {
 public:
  Responder(std::weak_ptr<ReplySink> connection, uint64_t request_id,
            const RpcObserver* observer = nullptr, const std::string* method = nullptr)
      : connection_(std::move(connection)),
        request_id_(request_id),
        observer_(observer != nullptr && *observer ? observer : nullptr),
        method_(method) {}

  void Ok(const Response& response) const { Send(Status::Ok(), &response); }
  void Fail(const Status& status) const { Send(status, nullptr); }
  void Reply(const Result<Response>& result) const {
    if (result.ok()) {
      Ok(*result);
    } else {
      Fail(result.status());
    }
  }

 private:
  void Send(const Status& status, const Response* response) const {
    if (observer_ != nullptr) {
      (*observer_)(*method_, status.code(), since_dispatch_.Seconds());
    }
    if (auto conn = connection_.lock()) conn->Reply(request_id_, status, response);
  }
  std::weak_ptr<ReplySink> connection_;
  uint64_t request_id_;
  const RpcObserver* observer_;
  const std::string* method_;
  Stopwatch since_dispatch_;  // real time, measured for the observer
};

class MethodRouter {
 public:
  template <typename Request, typename Response>
  using Handler = std::function<void(const CallContext&, Request, Responder<Response>)>;

  // Serves `method` (common/rpc/rpc_methods.h) with the right it declares.
  template <typename Request, typename Response>
  void Add(const RpcMethod<Request, Response>& method,
           std::type_identity_t<Handler<Request, Response>> handler) {
    Add<Request, Response>(std::string(method.name), method.right, std::move(handler));
  }

  // For methods outside the protocol's table (tests of the router itself).
  template <typename Request, typename Response>
  void Add(const std::string& method, Right needs, Handler<Request, Response> handler) {
    auto& entry = handlers_[method];
    entry = Entry{needs, [this, name = &handlers_.find(method)->first,
                          handler = std::move(handler)](const std::shared_ptr<ReplySink>& conn,
                                                        v1::Envelope envelope, Identity identity) {
                    Responder<Response> responder(conn, envelope.id(), &observer_, name);
                    Request request;
                    if (!request.ParseFromString(envelope.payload())) {
                      responder.Fail(InvalidArgument(
                          "malformed " + envelope.method() + " request: not a " +
                          Request::descriptor()->name() + ", or a string in it is not UTF-8 text"));
                      return;
                    }
                    handler(CallContext{std::dynamic_pointer_cast<Connection>(conn),
                                        std::move(*envelope.mutable_credential()),
                                        std::move(identity), envelope.method(), conn},
                            std::move(request), responder);
                  }};
  }

  // Answers unknown methods and callers without the method's right with an error (`on_refused`
  // hears of the latter); never throws.
  void Dispatch(const std::shared_ptr<ReplySink>& conn, v1::Envelope envelope,
                Identity identity) const;
  using RefusalLog = std::function<void(const Identity&, const std::string& method, const Status&)>;
  void set_on_refused(RefusalLog log) { on_refused_ = std::move(log); }
  // Hears of every answer to a known method, refusals included (set before serving; the
  // router must not move after methods are added).
  void set_observer(RpcObserver observer) { observer_ = std::move(observer); }

  // Every registered method and the right it needs (for audits and tests).
  std::unordered_map<std::string, Right> Methods() const;

 private:
  using Erased = std::function<void(const std::shared_ptr<ReplySink>&, v1::Envelope, Identity)>;
  struct Entry {
    Right needs;
    Erased call;
  };
  std::unordered_map<std::string, Entry> handlers_;
  RefusalLog on_refused_;
  RpcObserver observer_;
};

}  // namespace snn
