// The RPC methods agents call on their session: master.register, master.heartbeat,
// master.task_status. Registration, once it fits what an operator approved for the node, records
// the node durably and reconciles its tasks.
// Thread contract: only on the master's io thread.
#pragma once

#include <cstdint>
#include <functional>

#include "common/base/clock.h"
#include "common/rpc/rpc_router.h"
#include "master/jobs/job_lifecycle.h"
#include "master/nodes/node_approvals.h"

namespace snn {

struct AgentServiceOptions {
  int64_t heartbeat_interval_ms = 1000;
  int64_t lease_ms = 7500;                // shorter than the heartbeat timeout
  uint32_t auto_drain_health_below = 50;  // 0: never drain automatically
};

class AgentService {
 public:
  AgentService(NodeRegistry& nodes, Journal& journal, JobLifecycle& lifecycle, const Clock& clock,
               AgentServiceOptions options);

  void Register(MethodRouter& router);
  // Registrations must fit the node's approved inventory (not set: any is taken; --auth=none,
  // where anyone may claim to be any node anyway).
  void set_approvals(NodeApprovals* approvals) { approvals_ = approvals; }
  // The policy's suspend_after (ms), told to every agent at registration and each heartbeat.
  void set_suspend_after(std::function<uint64_t()> ms) { suspend_after_ms_ = std::move(ms); }

  // Checks a node record an agent sent: names, board sizes, capacities, dead cores.
  static Status ValidateNode(const v1::NodeRecord& node);

 private:
  void OnRegister(const CallContext& ctx, v1::RegisterRequest req,
                  Responder<v1::RegisterResponse> r);
  // Lowers the health of a board whose measured throughput is under half the median of the
  // other boards of its type: health = its share of that median, in percent.
  void JudgeThroughput(NodeEntry& entry);
  // Drains boards whose health fell below the threshold, and resumes those it drained once
  // they are healthy again.
  void AutoDrain(NodeEntry& entry);
  void OnHeartbeat(const CallContext& ctx, v1::HeartbeatRequest req,
                   Responder<v1::HeartbeatResponse> r);
  void OnTaskStatus(const CallContext& ctx, v1::TaskStatusReport req,
                    Responder<v1::TaskStatusAck> r);

  NodeRegistry& nodes_;
  Journal& journal_;
  JobLifecycle& lifecycle_;
  const Clock& clock_;
  const AgentServiceOptions options_;
  NodeApprovals* approvals_ = nullptr;
  std::function<uint64_t()> suspend_after_ms_ = [] { return uint64_t{0}; };
};

}  // namespace snn
