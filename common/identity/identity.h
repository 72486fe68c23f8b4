// Who a request comes from, and the right each RPC method needs. The master fills the identity
// from what it verified (a MUNGE credential, a TLS certificate), never from what the request
// claims; the router refuses a call whose caller lacks the method's right before the handler
// runs (default deny: every method is registered with the right it needs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/base/status.h"

namespace snn {

// Ordered: each role holds the rights of those before it.
enum class Role { kUser = 0, kReader = 1, kOperator = 2, kAdmin = 3 };

enum class Right {
  kEnrol,     // anyone: the handler checks a one-time join token
  kUser,      // an authenticated user (its tenant is checked by the handler)
  kReader,    // read every tenant's jobs and the cluster's state
  kOperator,  // drain, resume, fault commands
  kAdmin,     // policy, join tokens, everything
  kNode,      // an agent, named by its certificate
  kMaster,    // the master, calling an agent
};

struct Identity {
  enum class Kind { kNobody, kUser, kNode, kMaster };
  Kind kind = Kind::kNobody;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;                 // the user's name, from the uid
  std::vector<std::string> groups;  // its Unix groups' names
  Role role = Role::kUser;          // users: from the access policy
  std::string node;                 // nodes: the name in the certificate
  // Nodes: the certificate the connection presented (its serial, hex, and validity).
  std::string cert_serial;
  int64_t cert_not_before_s = 0, cert_not_after_s = 0;

  // "uid 1000 (alice)", "node n1", "nobody"
  std::string Describe() const;
};

const char* RightName(Right right);
const char* RoleName(Role role);

// OK, or a one-line PermissionDenied/Unauthenticated that names the missing right.
Status Authorize(const Identity& who, Right needs, const std::string& method);

}  // namespace snn
