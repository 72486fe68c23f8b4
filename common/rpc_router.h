// Dispatches incoming requests to typed handlers by method name. A handler gets the parsed
// request and a Responder it calls exactly once, now or later (after a durable commit).
// Thread contract: Dispatch and Responder run on the connection's io_context thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "common/connection.h"

namespace snn {

struct CallContext {
  std::shared_ptr<Connection> connection;
  v1::Credential credential;
};

template <typename Response>
class Responder {
 public:
  Responder(std::weak_ptr<Connection> connection, uint64_t request_id)
      : connection_(std::move(connection)), request_id_(request_id) {}

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
    if (auto conn = connection_.lock()) conn->Reply(request_id_, status, response);
  }
  std::weak_ptr<Connection> connection_;
  uint64_t request_id_;
};

class MethodRouter {
 public:
  template <typename Request, typename Response>
  using Handler = std::function<void(const CallContext&, Request, Responder<Response>)>;

  template <typename Request, typename Response>
  void Add(const std::string& method, Handler<Request, Response> handler) {
    handlers_[method] = [handler = std::move(handler)](const std::shared_ptr<Connection>& conn,
                                                       v1::Envelope envelope) {
      Responder<Response> responder(conn, envelope.id());
      Request request;
      if (!request.ParseFromString(envelope.payload())) {
        responder.Fail(InvalidArgument("malformed " + envelope.method() + " request"));
        return;
      }
      handler(CallContext{conn, std::move(*envelope.mutable_credential())}, std::move(request),
              responder);
    };
  }

  // Answers unknown methods with an error; never throws.
  void Dispatch(const std::shared_ptr<Connection>& conn, v1::Envelope envelope) const;

 private:
  using Erased = std::function<void(const std::shared_ptr<Connection>&, v1::Envelope)>;
  std::unordered_map<std::string, Erased> handlers_;
};

}  // namespace snn
