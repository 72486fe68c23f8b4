// The agents the master knows: each node's stored record (pools, boards), its live session,
// heartbeat time, and the resources the master has reserved on each board.
// Thread contract: only on the master's io thread. No I/O, no clock: time comes in as arguments.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/connection.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"

namespace snn {

struct BoardUsage {
  uint32_t cores = 0;
  uint32_t ksps = 0;
  uint32_t streams = 0;
  uint32_t tasks = 0;
};

struct NodeEntry {
  v1::NodeRecord record;
  std::vector<BoardUsage> usage;  // by board index
  std::shared_ptr<Connection> session;
  int64_t last_heartbeat_ms = 0;
  std::string down_reason;  // empty while UP
  bool up() const { return session != nullptr && down_reason.empty(); }
};

uint32_t LiveCores(const v1::BoardInfo& board);

class NodeRegistry {
 public:
  // Adds a node read back from the store; it stays DOWN until its agent registers.
  void Restore(v1::NodeRecord record);

  // Registers (or re-registers) a node on `session`; keeps the master's reservations.
  NodeEntry& Register(v1::NodeRecord record, std::shared_ptr<Connection> session, int64_t now_ms);

  NodeEntry* Find(const std::string& name);
  Status Heartbeat(const std::string& name, const Connection* session, int64_t now_ms);

  // Marks the node served by `session` DOWN; returns its name, or "" if none.
  std::string OnSessionClosed(const Connection* session);

  // Marks DOWN every UP node whose last heartbeat is older than `timeout_ms`; returns them.
  std::vector<std::string> ExpireHeartbeats(int64_t now_ms, int64_t timeout_ms);

  void Reserve(const std::string& node, uint32_t board, const v1::Resources& r);
  void Release(const std::string& node, uint32_t board, const v1::Resources& r);

  const std::map<std::string, NodeEntry>& nodes() const { return nodes_; }

 private:
  std::map<std::string, NodeEntry> nodes_;
};

}  // namespace snn
