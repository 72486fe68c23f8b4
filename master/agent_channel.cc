#include "master/agent_channel.h"

#include <glog/logging.h>

#include "master/node_registry.h"

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

void SessionAgentChannel::Launch(const std::string& node, const v1::LaunchRequest& request,
                                 LaunchDone done) {
  NodeEntry* entry = nodes_.Find(node);
  if (entry == nullptr || entry->session == nullptr) {
    return done(Unavailable("node " + node + " has no session"));
  }
  entry->session->Call("agent.launch", request, MasterCredential(),
                       [done = std::move(done)](Result<v1::Envelope> reply) {
                         done(DecodeResponse<v1::LaunchResponse>(reply));
                       });
}

void SessionAgentChannel::Kill(const std::string& node, const v1::KillRequest& request) {
  NodeEntry* entry = nodes_.Find(node);
  if (entry == nullptr || entry->session == nullptr) return;
  entry->session->Call(
      "agent.kill", request, MasterCredential(),
      [node, job_id = request.job_id(), index = request.index()](Result<v1::Envelope> reply) {
        auto r = DecodeResponse<v1::KillResponse>(reply);
        if (!r.ok()) {
          LOG(WARNING) << "kill of job " << job_id << " task " << index << " on " << node << ": "
                       << r.status().ToString();
        }
      });
}

}  // namespace snn
