// A blocking HTTP/1.1 client for tests of the master's HTTP API: one request per connection,
// HTTPS checked against the cluster's CA (or plain HTTP when no CA file is given).
// Thread-safe (no shared state).
#pragma once

#include <map>
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

}  // namespace snn::testing
