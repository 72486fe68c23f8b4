#include "common/base/status.h"

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
    case Code::kNotLeader:
      return "not the leader";
  }
  return "unknown";
}

namespace {
constexpr char kLeaderIsAt[] = "; the leader is at ";
}

Status NotLeader(const std::string& leader) {
  if (leader.empty()) {
    return Status(Code::kNotLeader, "this master is a standby; no leader is elected yet");
  }
  return Status(Code::kNotLeader, "this master is a standby" + std::string(kLeaderIsAt) + leader);
}

std::string LeaderNamedIn(const Status& status) {
  if (status.code() != Code::kNotLeader) return "";
  const auto at = status.message().find(kLeaderIsAt);
  if (at == std::string::npos) return "";
  return status.message().substr(at + sizeof(kLeaderIsAt) - 1);
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace snn
