#include "common/identity/identity.h"

namespace snn {

std::string Identity::Describe() const {
  switch (kind) {
    case Kind::kUser:
      return "uid " + std::to_string(uid) + " (" + user + ")";
    case Kind::kNode:
      return "node " + node;
    case Kind::kMaster:
      return "the master";
    case Kind::kNobody:
      break;
  }
  return "an unauthenticated caller";
}

const char* RightName(Right right) {
  switch (right) {
    case Right::kEnrol:
      return "a join token";
    case Right::kUser:
      return "an authenticated user";
    case Right::kReader:
      return "the reader role";
    case Right::kOperator:
      return "the operator role";
    case Right::kAdmin:
      return "the admin role";
    case Right::kNode:
      return "a node certificate";
    case Right::kMaster:
      return "the master's certificate";
  }
  return "an unknown right";
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kUser:
      return "user";
    case Role::kReader:
      return "reader";
    case Role::kOperator:
      return "operator";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

Status Authorize(const Identity& who, Right needs, const std::string& method) {
  using Kind = Identity::Kind;
  const auto refuse = [&](const std::string& has) {
    return PermissionDenied(method + " needs " + RightName(needs) + "; " + who.Describe() +
                            " has " + has);
  };
  switch (needs) {
    case Right::kEnrol:
      return Status::Ok();
    case Right::kNode:
      if (who.kind == Kind::kNode) return Status::Ok();
      break;
    case Right::kMaster:
      if (who.kind == Kind::kMaster) return Status::Ok();
      break;
    case Right::kUser:
    case Right::kReader:
    case Right::kOperator:
    case Right::kAdmin: {
      if (who.kind != Kind::kUser) break;
      const Role least = needs == Right::kUser       ? Role::kUser
                         : needs == Right::kReader   ? Role::kReader
                         : needs == Right::kOperator ? Role::kOperator
                                                     : Role::kAdmin;
      if (who.role >= least) return Status::Ok();
      return refuse(std::string("the ") + RoleName(who.role) + " role");
    }
  }
  if (who.kind == Kind::kNobody) {
    return Unauthenticated(method + " needs " + RightName(needs) +
                           "; the request proves no identity");
  }
  return refuse(who.kind == Kind::kNode ? "only a node certificate" : "no user role");
}

}  // namespace snn
