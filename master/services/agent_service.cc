#include "master/services/agent_service.h"

#include <glog/logging.h>

#include <algorithm>
#include <vector>

#include "common/base/board_constraint.h"

namespace snn {

AgentService::AgentService(NodeRegistry& nodes, Journal& journal, JobLifecycle& lifecycle,
                           const Clock& clock, AgentServiceOptions options)
    : nodes_(nodes), journal_(journal), lifecycle_(lifecycle), clock_(clock), options_(options) {}

void AgentService::Register(MethodRouter& router) {
  using namespace std::placeholders;
  router.Add(rpc::kNodeRegister, std::bind(&AgentService::OnRegister, this, _1, _2, _3));
  router.Add(rpc::kNodeHeartbeat, std::bind(&AgentService::OnHeartbeat, this, _1, _2, _3));
  router.Add(rpc::kNodeTaskStatus, std::bind(&AgentService::OnTaskStatus, this, _1, _2, _3));
}

Status AgentService::ValidateNode(const v1::NodeRecord& node) {
  // What one registration may declare: every bound keeps the master's memory for a node (its
  // record, and a grid per board) small, whatever an agent sends, and the record it keeps.
  constexpr int kMaxBoards = 64;
  constexpr uint64_t kMaxCoresPerNode = 1 << 20;  // e.g. 16 boards of 256x256
  constexpr int kMaxPools = 16;
  constexpr uint32_t kMaxKsps = 1000000000;  // a billion spikes a second per board
  constexpr uint32_t kMaxStreams = 65536;
  if (node.name().empty() || node.name().size() > 64) {
    return InvalidArgument("node name must be 1 to 64 characters");
  }
  if (node.pools_size() == 0 || node.pools_size() > kMaxPools) {
    return InvalidArgument("node " + node.name() + " must name 1 to 16 pools");
  }
  for (const auto& p : node.pools()) {
    if (p.empty() || p.size() > 64) return InvalidArgument("a pool name is 1 to 64 characters");
  }
  if (node.boards_size() == 0 || node.boards_size() > kMaxBoards) {
    return InvalidArgument("node " + node.name() + " must have 1 to 64 boards");
  }
  uint64_t cores = 0;
  for (int i = 0; i < node.boards_size(); ++i) {
    const auto& b = node.boards(i);
    const std::string which = "node " + node.name() + " board " + std::to_string(i);
    if (b.index() != static_cast<uint32_t>(i)) return InvalidArgument(which + " has a wrong index");
    if (b.width() < 1 || b.width() > 256 || b.height() < 1 || b.height() > 256) {
      return InvalidArgument(which + " mesh must be between 1x1 and 256x256");
    }
    cores += uint64_t{b.width()} * b.height();
    if (b.ksps() < 1 || b.streams() < 1 || b.ksps() > kMaxKsps || b.streams() > kMaxStreams ||
        b.measured_ksps() > kMaxKsps) {
      return InvalidArgument(which + " needs ksps from 1 to 10^9 and streams from 1 to 65536");
    }
    if (b.type().empty() || b.type().size() > 64) {
      return InvalidArgument(which + " needs a type of 1 to 64 characters");
    }
    if (b.health() > 100) return InvalidArgument(which + " has a health above 100");
    if (b.dead_cores_size() > static_cast<int>(b.width() * b.height())) {
      return InvalidArgument(which + " lists more dead cores than it has cores");
    }
    for (const auto& c : b.dead_cores()) {
      if (c.x() >= b.width() || c.y() >= b.height()) {
        return InvalidArgument(which + " lists a dead core outside its mesh");
      }
    }
    if (b.attributes_size() > static_cast<int>(kMaxBoardAttributes)) {
      return InvalidArgument(which + " reports more than " + std::to_string(kMaxBoardAttributes) +
                             " attributes");
    }
    for (const auto& [name, value] : b.attributes()) {
      if (Status ok = CheckBoardAttribute(name, value); !ok.ok()) {
        return InvalidArgument(which + ": " + ok.message());
      }
    }
  }
  if (cores > kMaxCoresPerNode) {
    return InvalidArgument("node " + node.name() + " declares " + std::to_string(cores) +
                           " cores; a node has at most " + std::to_string(kMaxCoresPerNode));
  }
  // Topology: each link from one of its own boards to a named board; a few per board.
  if (node.switch_name().size() > 255)
    return InvalidArgument("node " + node.name() + ": switch name over 255 bytes");
  if (node.links_size() > 16 * kMaxBoards) {
    return InvalidArgument("node " + node.name() + " declares more than " +
                           std::to_string(16 * kMaxBoards) + " links");
  }
  for (const auto& l : node.links()) {
    if (l.board() >= static_cast<uint32_t>(node.boards_size()) || l.to_node().empty() ||
        l.to_node().size() > 255 || l.to_board() >= kMaxBoards ||
        !(l.gbps() >= 0 && l.gbps() <= 1e6) || !(l.latency_us() >= 0 && l.latency_us() <= 1e9)) {
      return InvalidArgument("node " + node.name() + " declares a link from board " +
                             std::to_string(l.board()) + " that is out of range");
    }
  }
  return Status::Ok();
}

void AgentService::OnRegister(const CallContext& ctx, v1::RegisterRequest req,
                              Responder<v1::RegisterResponse> r) {
  if (Status s = ValidateNode(req.node()); !s.ok()) return r.Fail(s);
  if (req.tasks_size() > 100000) {
    return r.Fail(InvalidArgument("a registration reports at most 100000 tasks"));
  }
  if (ctx.identity.node != req.node().name()) {
    LOG(WARNING) << ctx.identity.Describe() << " from " << ctx.connection->peer()
                 << " tried to register as node '" << req.node().name() << "'";
    return r.Fail(PermissionDenied("registering as node '" + req.node().name() +
                                   "' needs that node's certificate; the caller holds " +
                                   ctx.identity.Describe()));
  }
  const std::string name = req.node().name();
  if (approvals_ != nullptr) {
    bool approved_now = false;
    if (Status s = approvals_->CheckRegistration(req.node(), &approved_now); !s.ok()) {
      LOG_EVERY_N(WARNING, 10) << "refused the registration of node " << name << " from "
                               << ctx.connection->peer() << ": " << s.message();
      return r.Fail(s);
    }
    if (approved_now) {
      LOG(INFO) << "node " << name << ": its first registration after its join token fixes its "
                << "approved inventory (" << req.node().boards_size() << " boards)";
      journal_.PutApproval(*approvals_->Find(name));
    }
  }
  req.mutable_node()->set_registered_ms(clock_.NowMs());
  NodeEntry& entry = nodes_.Register(req.node(), ctx.connection, clock_.NowMs());
  JudgeThroughput(entry);
  AutoDrain(entry);
  journal_.PutNode(entry.record);
  ctx.connection->set_label(name);
  lifecycle_.ReconcileNode(name, req);
  LOG(INFO) << "node " << name << " registered from " << ctx.connection->peer() << " with "
            << req.node().boards_size() << " boards and " << req.tasks_size() << " tasks";
  v1::RegisterResponse resp;
  resp.set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
  resp.set_lease_ms(options_.lease_ms);
  resp.set_suspend_after_ms(suspend_after_ms_());
  journal_.Commit([r, resp] { r.Ok(resp); });
}

void AgentService::JudgeThroughput(NodeEntry& entry) {
  for (auto& b : *entry.record.mutable_boards()) {
    if (b.measured_ksps() == 0 || b.health() == 0) continue;
    // The peers: every other board of this type the master knows, by their measured throughput.
    const uint32_t median = nodes_.PeerMedianKsps(b.type(), b.measured_ksps());
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
                            std::to_string(options_.auto_drain_health_below) +
                            (b.health_detail().empty() ? "" : ": " + b.health_detail());
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
  v1::HeartbeatResponse resp;
  resp.set_suspend_after_ms(suspend_after_ms_());
  if (req.usage_size() == 0) return r.Ok(resp);
  for (const auto& usage : req.usage()) lifecycle_.ApplyUsage(req.node(), usage);
  journal_.Commit([r, resp] { r.Ok(resp); });
}

void AgentService::OnTaskStatus(const CallContext& ctx, v1::TaskStatusReport req,
                                Responder<v1::TaskStatusAck> r) {
  const std::string& node = ctx.connection->label();
  NodeEntry* entry = nodes_.Find(node);
  if (node.empty() || node != ctx.identity.node || entry == nullptr ||
      entry->session != ctx.connection) {
    return r.Fail(FailedPrecondition("task status from a session that has not registered"));
  }
  for (const auto& status : req.tasks()) lifecycle_.ApplyTaskStatus(node, status);
  journal_.Commit([r] { r.Ok(v1::TaskStatusAck()); });
}

}  // namespace snn
