// Operator methods on nodes: `admin.drain` drains or resumes a node or a board (durably);
// `admin.board.mark` sets and removes a board's marks (the master's attributes, which
// constraints test; durably); `admin.sim_fault` injects a fault into a simulated board, through
// the node's agent.
// Thread contract: only on the master's io thread.
#pragma once

#include <functional>

#include "common/rpc/rpc_router.h"
#include "master/jobs/agent_channel.h"
#include "master/nodes/node_registry.h"
#include "master/store/journal.h"

namespace snn {

class AdminService {
 public:
  AdminService(NodeRegistry& nodes, AgentChannel& agents, Journal& journal,
               std::function<void()> request_schedule)
      : nodes_(nodes),
        agents_(agents),
        journal_(journal),
        request_schedule_(std::move(request_schedule)) {}
  void Register(MethodRouter& router);

 private:
  void Drain(const CallContext& ctx, v1::DrainRequest req, Responder<v1::DrainResponse> r);
  void SimFault(const CallContext& ctx, v1::SimFaultRequest req, Responder<v1::SimFaultResponse> r);
  void MarkBoard(const CallContext& ctx, v1::BoardMarkRequest req,
                 Responder<v1::BoardMarkResponse> r);

  NodeRegistry& nodes_;
  AgentChannel& agents_;  // passes fault injections on to the agents
  Journal& journal_;
  std::function<void()> request_schedule_;
};

}  // namespace snn
