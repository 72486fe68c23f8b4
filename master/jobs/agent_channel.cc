#include "master/jobs/agent_channel.h"

#include <glog/logging.h>

#include "master/nodes/node_registry.h"

namespace snn {
namespace {

v1::Credential MasterCredential() {
  v1::Credential c;
  c.set_user("snn-master");
  return c;
}

}  // namespace

bool SessionAgentChannel::Reachable(const std::string& node) const {
  const NodeEntry* entry = nodes_.Find(node);
  return entry != nullptr && entry->session != nullptr;
}

uint64_t SessionAgentChannel::SessionEpoch(const std::string& node) const {
  const NodeEntry* entry = nodes_.Find(node);
  return entry == nullptr ? 0 : entry->session_epoch;
}

template <typename Request, typename Response>
void SessionAgentChannel::Call(const std::string& node, const RpcMethod<Request, Response>& method,
                               const Request& request, std::function<void(Result<Response>)> done) {
  NodeEntry* entry = nodes_.Find(node);
  if (entry == nullptr || entry->session == nullptr) {
    return done(Unavailable("node " + node + " has no session"));
  }
  entry->session->Call(method, request, MasterCredential(),
                       [done = std::move(done)](Result<v1::Envelope> reply) {
                         done(DecodeResponse<Response>(reply));
                       });
}

void SessionAgentChannel::Launch(const std::string& node, const v1::LaunchRequest& request,
                                 LaunchDone done) {
  Call(node, rpc::kAgentLaunch, request, std::move(done));
}

void SessionAgentChannel::TaskOutput(const std::string& node, const v1::TaskOutputRequest& request,
                                     OutputDone done) {
  Call(node, rpc::kAgentTaskOutput, request, std::move(done));
}

void SessionAgentChannel::SimFault(const std::string& node, const v1::SimFaultRequest& request,
                                   FaultDone done) {
  Call(node, rpc::kAgentSimFault, request, std::move(done));
}

void SessionAgentChannel::RunExperiments(const std::string& node, const v1::ExperimentBatch& turn,
                                         TurnDone done) {
  Call(node, rpc::kAgentRunExperiments, turn, std::move(done));
}

void SessionAgentChannel::Kill(const std::string& node, const v1::KillRequest& request) {
  NodeEntry* entry = nodes_.Find(node);
  if (entry == nullptr || entry->session == nullptr) return;
  entry->session->Call(
      rpc::kAgentKill, request, MasterCredential(),
      [node, job_id = request.job_id(), index = request.index()](Result<v1::Envelope> reply) {
        auto r = DecodeResponse<v1::KillResponse>(reply);
        if (!r.ok()) {
          LOG(WARNING) << "kill of job " << job_id << " task " << index << " on " << node << ": "
                       << r.status().ToString();
        }
      });
}

}  // namespace snn
