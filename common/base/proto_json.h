// Messages as JSON, one way for every program: snnctl's -o json and the HTTP API print the same
// text for the same answer (proto field names, every field, enums by name, 64-bit integers as
// strings, as proto3's JSON mapping says).
#pragma once

#include <google/protobuf/message.h>

#include <string>

#include "common/base/status.h"

namespace snn {

std::string ToJson(const google::protobuf::Message& message);
// The same on one line (an event stream's data).
std::string ToJsonLine(const google::protobuf::Message& message);
// Strict: an unknown field or a value of the wrong kind is an error that names it.
Status FromJson(const std::string& json, google::protobuf::Message& message);

}  // namespace snn
