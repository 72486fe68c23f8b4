#include "common/status.h"

namespace snn {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      return "invalid argument";
    case Code::kNotFound:
      return "not found";
    case Code::kAlreadyExists:
      return "already exists";
    case Code::kFailedPrecondition:
      return "failed precondition";
    case Code::kUnavailable:
      return "unavailable";
    case Code::kDeadlineExceeded:
      return "deadline exceeded";
    case Code::kInternal:
      return "internal error";
    case Code::kUnauthenticated:
      return "unauthenticated";
    case Code::kResourceExhausted:
      return "resource exhausted";
    case Code::kPermissionDenied:
      return "permission denied";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace snn
