// The HTTP API's resources: each route is a verb and a path under /v1/ bound to one RPC method of
// the protocol's table (common/rpc/rpc_methods.h), so it needs the same right, runs the same
// handler and answers the same message as the RPC (in JSON). This table is the one source of the
// OpenAPI document (master/http/openapi.h).
// Path parameters ("{id}") and named query parameters fill fields of the request (a dotted field
// path: "job.tenant_job_id"); any other query parameter must name a top-level field of the request
// that is a number, a flag, a string, an enum or a list of those (comma-separated).
// Plain constants after the first call: safe from any thread.
#pragma once

#include <google/protobuf/descriptor.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/rpc/rpc_methods.h"

namespace snn {

enum class RestBody {
  kNone,         // parameters only
  kMessage,      // the request message in JSON
  kJobDocument,  // a job file (YAML or JSON, docs/reference/job-file.md)
};

struct RestParam {
  std::string name;   // as in the path ("{id}") or the query ("tenant")
  std::string field;  // the request field it fills ("job.tenant_job_id")
  bool in_path = false;
  std::string help;
};

struct RestRoute {
  std::string verb;  // GET, POST, PUT, DELETE
  std::string path;  // "/v1/jobs/{id}"
  std::string summary;
  std::string method;  // the RPC method
  Right right = Right::kUser;
  const google::protobuf::Descriptor* request = nullptr;
  const google::protobuf::Descriptor* response = nullptr;
  RestBody body = RestBody::kNone;
  std::vector<RestParam> params;
  std::vector<std::pair<std::string, std::string>> fixed;  // fields this route sets ("release")
};

const std::vector<RestRoute>& RestRoutes();

}  // namespace snn
