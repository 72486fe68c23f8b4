// A blocking HTTP/1.1 client for tests of the master's HTTP API: one request per connection,
// HTTPS checked against the cluster's CA (or plain HTTP when no CA file is given).
// Thread-safe (no shared state).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "common/base/status.h"

namespace snn::testing {

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

struct HttpCall {
  std::string method = "GET";
  std::string target;  // "/v1/jobs?limit=3"
  std::string token;   // sent as "Authorization: Bearer TOKEN" when not empty
  std::string body;
  std::map<std::string, std::string> headers;
};

Result<HttpResult> HttpDo(const std::string& host, uint16_t port, const std::string& ca_file,
                          const HttpCall& call);

// A request whose answer goes on (an event stream): read on a thread of its own into a text the
// test waits on. The destructor closes the connection and joins the thread.
class HttpEventStream {
 public:
  static Result<std::unique_ptr<HttpEventStream>> Open(const std::string& host, uint16_t port,
                                                       const std::string& ca_file,
                                                       const HttpCall& call);
  ~HttpEventStream();
  std::string text() const;  // everything read so far, the answer's header included
  bool ended() const;        // the server closed it

  struct State;

 private:
  explicit HttpEventStream(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace snn::testing
