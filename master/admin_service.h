// Operator methods that act on nodes through their agents: `admin.sim_kill_core` makes a core
// of a simulated board fail (fault injection for tests and demos).
// Thread contract: only on the master's io thread.
#pragma once

#include "common/rpc_router.h"
#include "master/journal.h"
#include "master/node_registry.h"

namespace snn {

class AdminService {
 public:
  AdminService(NodeRegistry& nodes, Journal& journal) : nodes_(nodes), journal_(journal) {}
  void Register(MethodRouter& router);

 private:
  void SimKillCore(const CallContext& ctx, v1::SimKillCoreRequest req,
                   Responder<v1::SimKillCoreResponse> r);

  NodeRegistry& nodes_;
  Journal& journal_;
};

}  // namespace snn
