// The HTTP API's OpenAPI 3.1 document, generated from its one source: the route table
// (master/http/rest_routes.h) and the messages' descriptors (proto/*.proto), so the document
// cannot disagree with what the API serves. Field comments are not in the descriptors; the
// document links the guides instead.
// Pure; computed once; thread-safe.
#pragma once

#include <string>

namespace snn {

const std::string& OpenApiDocument();

}  // namespace snn
