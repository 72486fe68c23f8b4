// From an HTTP request to the RPC request of its route: the target split and percent-decoded,
// the route matched, and the request message filled from the body, the path and the query.
// Every mistake is one line naming what was wrong and what is accepted.
// Pure; thread-safe.
#pragma once

#include <google/protobuf/message.h>

#include <map>
#include <memory>
#include <string>

#include "common/base/status.h"
#include "master/http/rest_routes.h"

namespace snn {

struct HttpTarget {
  std::string path;                               // decoded
  std::multimap<std::string, std::string> query;  // decoded
};
Result<HttpTarget> ParseTarget(const std::string& target);

struct RouteMatch {
  const RestRoute* route = nullptr;
  std::map<std::string, std::string> path_params;
};
// NotFound when no route has the path; "method not allowed" (FailedPrecondition, with the verbs
// the path takes) when it has it for other verbs.
Result<RouteMatch> MatchRoute(const std::string& verb, const std::string& path);

// Sets the field at `field_path` ("job.tenant_job_id") from its text; a repeated field takes a
// comma-separated list.
Status SetFieldFromText(google::protobuf::Message& message, const std::string& field_path,
                        const std::string& text, const std::string& what);

// The route's request: from the body (as the route reads it), then the path, the named query
// parameters, any top-level field given in the query, and the route's fixed fields. `reserved`
// query parameters (wait, ...) are the caller's and skipped.
Result<std::unique_ptr<google::protobuf::Message>> BuildRequest(
    const RouteMatch& match, const HttpTarget& target, const std::string& body,
    const std::vector<std::string>& reserved = {});

}  // namespace snn
