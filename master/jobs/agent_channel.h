// How the master reaches the agents: launch and kill one task (TaskDispatch), read a task's
// output (snnctl logs), inject a simulated fault (operators) and run an experiment service's
// turn (master/experiments/experiment_book.h). The daemon's SessionAgentChannel
// makes every call on the session the node registered with, with the master's one credential;
// tests use a fake that records each call and answers, delays or drops it as the test says.
// Thread contract: the master's io thread; answers come back on it.
#pragma once

#include <functional>
#include <string>

#include "common/base/status.h"
#include "common/rpc/rpc_methods.h"
#include "proto/node.pb.h"

namespace snn {

class NodeRegistry;

class AgentChannel {
 public:
  using LaunchDone = std::function<void(Result<v1::LaunchResponse>)>;
  virtual ~AgentChannel() = default;

  // Whether `node` has a session now. A launch for a node without one is not sent: the task is
  // settled when the node registers (it reports it, or the master gives it up).
  virtual bool Reachable(const std::string& node) const = 0;
  // Which session of `node` a call made now goes on: it changes when the node registers on a
  // new one. A launch sent on the session a registration came on may still reach the agent
  // after the agent described its tasks; one sent on an earlier session never will.
  virtual uint64_t SessionEpoch(const std::string& node) const = 0;
  // `done` gets the agent's answer, or kUnavailable if the session dropped before it came:
  // then whether the task started is not known until the node registers again.
  virtual void Launch(const std::string& node, const v1::LaunchRequest& request,
                      LaunchDone done) = 0;
  // Best effort: a node that misses a kill is fenced when it registers again.
  virtual void Kill(const std::string& node, const v1::KillRequest& request) = 0;
  // A piece of a task's stdout or stderr, read by its agent from the task's directory.
  using OutputDone = std::function<void(Result<v1::TaskOutputResponse>)>;
  virtual void TaskOutput(const std::string& node, const v1::TaskOutputRequest& request,
                          OutputDone done) = 0;
  // A fault on a simulated board; the agent re-registers with the board's new state first.
  using FaultDone = std::function<void(Result<v1::SimFaultResponse>)>;
  virtual void SimFault(const std::string& node, const v1::SimFaultRequest& request,
                        FaultDone done) = 0;
  // One user's turn on a task of an experiment service: `done` gets the results.
  using TurnDone = std::function<void(Result<v1::ExperimentBatchResponse>)>;
  virtual void RunExperiments(const std::string& node, const v1::ExperimentBatch& turn,
                              TurnDone done) = 0;
};

// Calls the agents' registered sessions (NodeEntry::session).
class SessionAgentChannel : public AgentChannel {
 public:
  explicit SessionAgentChannel(NodeRegistry& nodes) : nodes_(nodes) {}
  bool Reachable(const std::string& node) const override;
  uint64_t SessionEpoch(const std::string& node) const override;
  void Launch(const std::string& node, const v1::LaunchRequest& request, LaunchDone done) override;
  void Kill(const std::string& node, const v1::KillRequest& request) override;
  void TaskOutput(const std::string& node, const v1::TaskOutputRequest& request,
                  OutputDone done) override;
  void SimFault(const std::string& node, const v1::SimFaultRequest& request,
                FaultDone done) override;
  void RunExperiments(const std::string& node, const v1::ExperimentBatch& turn,
                      TurnDone done) override;

 private:
  // Calls `method` on `node`'s session; `done` gets the decoded answer (kUnavailable without
  // a session, or when it drops before the answer).
  template <typename Request, typename Response>
  void Call(const std::string& node, const RpcMethod<Request, Response>& method,
            const Request& request, std::function<void(Result<Response>)> done);

  NodeRegistry& nodes_;
};

}  // namespace snn
