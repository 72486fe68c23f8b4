#include "master/services/agent_service.h"

#include <glog/logging.h>

#include <algorithm>
#include <vector>

namespace snn {

AgentService::AgentService(NodeRegistry& nodes, Journal& journal, JobController& controller,
                           const Clock& clock, AgentServiceOptions options)
    : nodes_(nodes), journal_(journal), controller_(controller), clock_(clock), options_(options) {}

void AgentService::Register(MethodRouter& router) {
  using namespace std::placeholders;
  router.Add<v1::RegisterRequest, v1::RegisterResponse>(
      "master.register", Right::kNode, std::bind(&AgentService::OnRegister, this, _1, _2, _3));
  router.Add<v1::HeartbeatRequest, v1::HeartbeatResponse>(
      "master.heartbeat", Right::kNode, std::bind(&AgentService::OnHeartbeat, this, _1, _2, _3));
  router.Add<v1::TaskStatusReport, v1::TaskStatusAck>(
      "master.task_status", Right::kNode, std::bind(&AgentService::OnTaskStatus, this, _1, _2, _3));
}

Status AgentService::ValidateNode(const v1::NodeRecord& node) {
  if (node.name().empty() || node.name().size() > 253) {
    return InvalidArgument("node name must be 1 to 253 characters");
  }
  if (node.pools_size() == 0) return InvalidArgument("node " + node.name() + " names no pool");
  if (node.boards_size() == 0 || node.boards_size() > 1024) {
    return InvalidArgument("node " + node.name() + " must have 1 to 1024 boards");
  }
  for (int i = 0; i < node.boards_size(); ++i) {
    const auto& b = node.boards(i);
    const std::string which = "node " + node.name() + " board " + std::to_string(i);
    if (b.index() != static_cast<uint32_t>(i)) return InvalidArgument(which + " has a wrong index");
    if (b.width() < 1 || b.width() > 256 || b.height() < 1 || b.height() > 256) {
      return InvalidArgument(which + " mesh must be between 1x1 and 256x256");
    }
    if (b.ksps() < 1 || b.streams() < 1) {
      return InvalidArgument(which + " needs ksps and streams of at least 1");
    }
    if (b.type().empty()) return InvalidArgument(which + " has no type");
    for (const auto& c : b.dead_cores()) {
      if (c.x() >= b.width() || c.y() >= b.height()) {
        return InvalidArgument(which + " lists a dead core outside its mesh");
      }
    }
  }
  return Status::Ok();
}

void AgentService::OnRegister(const CallContext& ctx, v1::RegisterRequest req,
                              Responder<v1::RegisterResponse> r) {
  if (Status s = ValidateNode(req.node()); !s.ok()) return r.Fail(s);
  if (ctx.identity.node != req.node().name()) {
    LOG(WARNING) << ctx.identity.Describe() << " from " << ctx.connection->peer()
                 << " tried to register as node '" << req.node().name() << "'";
    return r.Fail(PermissionDenied("registering as node '" + req.node().name() +
                                   "' needs that node's certificate; the caller holds " +
                                   ctx.identity.Describe()));
  }
  const std::string name = req.node().name();
  req.mutable_node()->set_registered_ms(clock_.NowMs());
  NodeEntry& entry = nodes_.Register(req.node(), ctx.connection, clock_.NowMs());
  JudgeThroughput(entry);
  AutoDrain(entry);
  journal_.PutNode(entry.record);
  ctx.connection->set_label(name);
  controller_.ReconcileNode(name, req);
  LOG(INFO) << "node " << name << " registered from " << ctx.connection->peer() << " with "
            << req.node().boards_size() << " boards and " << req.tasks_size() << " tasks";
  v1::RegisterResponse resp;
  resp.set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
  resp.set_lease_ms(options_.lease_ms);
  journal_.Commit([r, resp] { r.Ok(resp); });
}

void AgentService::JudgeThroughput(NodeEntry& entry) {
  for (auto& b : *entry.record.mutable_boards()) {
    if (b.measured_ksps() == 0 || b.health() == 0) continue;
    // The peers: every other board of this type the master knows, by their measured throughput.
    std::vector<uint32_t> peers;
    for (const auto& [name, other] : nodes_.nodes()) {
      for (const auto& p : other.record.boards()) {
        if (p.type() != b.type() || p.measured_ksps() == 0 ||
            (name == entry.record.name() && p.index() == b.index())) {
          continue;
        }
        peers.push_back(p.measured_ksps());
      }
    }
    if (peers.empty()) continue;
    std::nth_element(peers.begin(), peers.begin() + peers.size() / 2, peers.end());
    const uint32_t median = peers[peers.size() / 2];
    if (median == 0 || b.measured_ksps() * 2 >= median) continue;  // within half of its peers
    const uint32_t share = static_cast<uint32_t>(uint64_t{100} * b.measured_ksps() / median);
    if (share < b.health()) {
      LOG(WARNING) << "board " << entry.record.name() << "/" << b.index() << " measures "
                   << b.measured_ksps() << " ksps against " << median << " for its peers";
      b.set_health(share);
    }
  }
}

void AgentService::AutoDrain(NodeEntry& entry) {
  if (options_.auto_drain_health_below == 0) return;
  static const std::string kAuto = "automatic: health ";
  auto& drains = *entry.record.mutable_board_drain_reasons();
  for (const auto& b : entry.record.boards()) {
    auto it = drains.find(b.index());
    const bool automatic = it != drains.end() && it->second.rfind(kAuto, 0) == 0;
    if (b.health() < options_.auto_drain_health_below) {
      if (it == drains.end() || automatic) {  // never overwrite an operator's drain
        drains[b.index()] = kAuto + std::to_string(b.health()) + " is below " +
                            std::to_string(options_.auto_drain_health_below);
        LOG(WARNING) << "board " << entry.record.name() << "/" << b.index()
                     << " drained: " << drains[b.index()];
      }
    } else if (automatic) {
      drains.erase(it);
      LOG(INFO) << "board " << entry.record.name() << "/" << b.index() << " healthy again";
    }
  }
}

void AgentService::OnHeartbeat(const CallContext& ctx, v1::HeartbeatRequest req,
                               Responder<v1::HeartbeatResponse> r) {
  if (ctx.identity.node != req.node()) {
    return r.Fail(
        PermissionDenied("a heartbeat for node '" + req.node() + "' needs its certificate"));
  }
  Status s = nodes_.Heartbeat(req.node(), ctx.connection.get(), clock_.NowMs());
  if (!s.ok()) return r.Fail(s);
  if (req.usage_size() == 0) return r.Ok(v1::HeartbeatResponse());
  for (const auto& usage : req.usage()) controller_.ApplyUsage(req.node(), usage);
  journal_.Commit([r] { r.Ok(v1::HeartbeatResponse()); });
}

void AgentService::OnTaskStatus(const CallContext& ctx, v1::TaskStatusReport req,
                                Responder<v1::TaskStatusAck> r) {
  const std::string& node = ctx.connection->label();
  NodeEntry* entry = nodes_.Find(node);
  if (node.empty() || node != ctx.identity.node || entry == nullptr ||
      entry->session != ctx.connection) {
    return r.Fail(FailedPrecondition("task status from a session that has not registered"));
  }
  for (const auto& status : req.tasks()) controller_.ApplyTaskStatus(node, status);
  journal_.Commit([r] { r.Ok(v1::TaskStatusAck()); });
}

}  // namespace snn
