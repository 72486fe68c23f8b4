// The agents the master knows: each node's stored record (pools, boards), its live session,
// heartbeat time, and the resources the master has reserved on each board.
// Thread contract: only on the master's io thread. No I/O, no clock: time comes in as arguments.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/base/core_grid.h"
#include "common/rpc/connection.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"

namespace snn {

struct BoardUsage {
  uint32_t cores = 0;
  uint32_t ksps = 0;
  uint32_t streams = 0;
  uint32_t tasks = 0;
  std::vector<Rect> rects;         // the rectangles tasks hold
  std::shared_ptr<CoreGrid> grid;  // the free map: dead cores and those rectangles
  Rect largest_live;               // largest rectangle of live cores on the empty board
  // The free map's maximal empty rectangles, kept with it so a scheduling pass need not
  // recompute them for every board.
  std::shared_ptr<const std::vector<Rect>> mers;
  uint32_t max_mer_area = 0;
};

struct NodeEntry {
  v1::NodeRecord record;
  std::vector<BoardUsage> usage;  // by board index
  std::shared_ptr<Connection> session;
  uint64_t session_epoch = 0;  // counts the sessions the node registered on
  int64_t last_heartbeat_ms = 0;
  std::string down_reason;  // empty while UP
  bool expired = false;     // missed the heartbeat timeout; its tasks were given up
  bool up() const { return session != nullptr && down_reason.empty(); }
  // Why new work may not go to `board` ("" if it may): the node's or the board's drain.
  std::string DrainReason(uint32_t board) const;
};

uint32_t LiveCores(const v1::BoardInfo& board);
// As pool status shows them: "UP" or "DOWN (why)"; a board's "UP", "DRAINING (why)" while its
// tasks run, "DRAINED (why)", or its node's DOWN.
std::string NodeStateText(const NodeEntry& entry);
std::string BoardStateText(const NodeEntry& entry, const v1::BoardInfo& board);
Rect RectOf(const v1::CoreRect& r);

class NodeRegistry {
 public:
  // Adds a node read back from the store; it stays DOWN until its agent registers, and has one
  // heartbeat timeout from `now_ms` to do so before its tasks are given up.
  void Restore(v1::NodeRecord record, int64_t now_ms);

  // Registers (or re-registers) a node on `session`; keeps the master's reservations.
  NodeEntry& Register(v1::NodeRecord record, std::shared_ptr<Connection> session, int64_t now_ms);

  NodeEntry* Find(const std::string& name);
  const NodeEntry* Find(const std::string& name) const;

  // Drains (non-empty reason) or resumes a node, or one board if `board` >= 0.
  Status SetDrain(const std::string& node, int board, const std::string& reason);
  Status Heartbeat(const std::string& name, const Connection* session, int64_t now_ms);
  // Sets attribute `name` of a board to `value` (NodeRecord.board_marks); the record to store,
  // or null if there is no such board, or it holds kMaxBoardMarks others already.
  const v1::NodeRecord* Mark(const std::string& node, uint32_t board, const std::string& name,
                             const std::string& value);
  // An operator's change to a board's marks: sets `set`, removes `unset` (each must be a mark
  // now: what the driver reports is the board's, not the master's). Checks every name and value
  // first, and changes nothing unless all of them pass; a board holds at most kMaxBoardMarks.
  Status SetMarks(const std::string& node, uint32_t board,
                  const std::map<std::string, std::string>& set,
                  const std::vector<std::string>& unset);
  static constexpr size_t kMaxBoardMarks = 64;

  // Marks the node served by `session` DOWN; returns its name, or "" if none.
  std::string OnSessionClosed(const Connection* session);

  // Every node, connected or not, whose last heartbeat is older than `timeout_ms` and that has
  // not expired yet: marks it DOWN and expired, and returns it.
  std::vector<std::string> ExpireHeartbeats(int64_t now_ms, int64_t timeout_ms);

  // Holds `rect` and the task's KSPS and streams on a board (the rectangle may be empty for a
  // task whose place is not known yet).
  void Reserve(const std::string& node, uint32_t board, const v1::Resources& r, const Rect& rect);
  void Release(const std::string& node, uint32_t board, const v1::Resources& r, const Rect& rect);

  // The median measured throughput of the boards of `type` other than one board measuring
  // `own` (which must be among them), or 0 if it has no peer: in O(log boards), not a walk
  // over every node, as thousands of agents register at once after a restart.
  uint32_t PeerMedianKsps(const std::string& type, uint32_t own) const;
  // The median measured KSPS of the boards of `type`, or 0 if none is measured.
  uint32_t MedianKsps(const std::string& type) const;

  const std::map<std::string, NodeEntry>& nodes() const { return nodes_; }
  // Moves whenever a node's description may have changed (registered, restored, drained):
  // what is derived from the descriptions alone is rebuilt when it differs.
  uint64_t generation() const { return generation_; }

 private:
  // Rebuilds every board's free map from its description and the rectangles held on it.
  static void RebuildGrids(NodeEntry& entry);

  // Adds (+1) or removes (-1) a node's boards' measured throughput.
  void CountMeasured(const v1::NodeRecord& record, int sign);

  std::map<std::string, NodeEntry> nodes_;
  // By board type: the measured throughput of every board that reports one, sorted.
  std::unordered_map<std::string, std::vector<uint32_t>> measured_;
  uint64_t generation_ = 0;
};

}  // namespace snn
