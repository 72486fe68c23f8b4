#include "master/node_registry.h"

#include <glog/logging.h>

namespace snn {

uint32_t LiveCores(const v1::BoardInfo& board) {
  const uint32_t total = board.width() * board.height();
  const uint32_t dead = static_cast<uint32_t>(board.dead_cores_size());
  return dead >= total ? 0 : total - dead;
}

void NodeRegistry::Restore(v1::NodeRecord record) {
  NodeEntry& entry = nodes_[record.name()];
  entry.usage.resize(record.boards_size());
  entry.record = std::move(record);
  entry.down_reason = "agent has not registered since the master started";
}

NodeEntry& NodeRegistry::Register(v1::NodeRecord record, std::shared_ptr<Connection> session,
                                  int64_t now_ms) {
  NodeEntry& entry = nodes_[record.name()];
  if (entry.session && entry.session != session) {
    LOG(WARNING) << "node " << record.name() << " registered again on a new session; "
                 << "closing the old one from " << entry.session->peer();
    auto old = std::move(entry.session);
    entry.session = nullptr;
    old->Close(FailedPrecondition("replaced by a newer session of the same node"));
  }
  if (static_cast<int>(entry.usage.size()) > record.boards_size()) {
    LOG(WARNING) << "node " << record.name() << " now reports fewer boards ("
                 << record.boards_size() << ") than before (" << entry.usage.size() << ")";
  }
  entry.usage.resize(std::max<size_t>(entry.usage.size(), record.boards_size()));
  entry.record = std::move(record);
  entry.session = std::move(session);
  entry.last_heartbeat_ms = now_ms;
  entry.down_reason.clear();
  return entry;
}

NodeEntry* NodeRegistry::Find(const std::string& name) {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

Status NodeRegistry::Heartbeat(const std::string& name, const Connection* session,
                               int64_t now_ms) {
  NodeEntry* entry = Find(name);
  if (entry == nullptr || entry->session.get() != session) {
    return FailedPrecondition("node '" + name + "' is not registered on this session");
  }
  entry->last_heartbeat_ms = now_ms;
  entry->down_reason.clear();
  return Status::Ok();
}

std::string NodeRegistry::OnSessionClosed(const Connection* session) {
  for (auto& [name, entry] : nodes_) {
    if (entry.session.get() == session) {
      entry.session = nullptr;
      entry.down_reason = "agent disconnected";
      return name;
    }
  }
  return "";
}

std::vector<std::string> NodeRegistry::ExpireHeartbeats(int64_t now_ms, int64_t timeout_ms) {
  std::vector<std::string> expired;
  for (auto& [name, entry] : nodes_) {
    if (entry.up() && now_ms - entry.last_heartbeat_ms > timeout_ms) {
      entry.down_reason = "no heartbeat for " + std::to_string((now_ms - entry.last_heartbeat_ms) /
                                                               1000) + " s";
      expired.push_back(name);
    }
  }
  return expired;
}

void NodeRegistry::Reserve(const std::string& node, uint32_t board, const v1::Resources& r) {
  NodeEntry* entry = Find(node);
  if (entry == nullptr) {
    LOG(WARNING) << "reservation on unknown node " << node;
    return;
  }
  if (board >= entry->usage.size()) entry->usage.resize(board + 1);
  BoardUsage& u = entry->usage[board];
  u.cores += r.cores();
  u.ksps += r.ksps();
  u.streams += r.streams();
  u.tasks += 1;
}

void NodeRegistry::Release(const std::string& node, uint32_t board, const v1::Resources& r) {
  NodeEntry* entry = Find(node);
  if (entry == nullptr || board >= entry->usage.size()) return;
  BoardUsage& u = entry->usage[board];
  auto sub = [](uint32_t& a, uint32_t b) { a = a >= b ? a - b : 0; };
  sub(u.cores, r.cores());
  sub(u.ksps, r.ksps());
  sub(u.streams, r.streams());
  sub(u.tasks, 1);
}

}  // namespace snn
