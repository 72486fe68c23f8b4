#include "master/nodes/node_registry.h"

#include <glog/logging.h>

#include <algorithm>

#include "common/base/board_constraint.h"
#include "common/base/rect_allocator.h"

namespace snn {

std::string NodeStateText(const NodeEntry& entry) {
  return entry.up() ? "UP" : "DOWN (" + entry.down_reason + ")";
}

std::string BoardStateText(const NodeEntry& entry, const v1::BoardInfo& board) {
  if (!entry.up()) return NodeStateText(entry);
  const std::string drain = entry.DrainReason(board.index());
  if (drain.empty()) return "UP";
  const bool busy = board.index() < entry.usage.size() && entry.usage[board.index()].tasks > 0;
  return (busy ? "DRAINING (" : "DRAINED (") + drain + ")";
}

uint32_t LiveCores(const v1::BoardInfo& board) {
  const uint32_t total = board.width() * board.height();
  const uint32_t dead = static_cast<uint32_t>(board.dead_cores_size());
  return dead >= total ? 0 : total - dead;
}

Rect RectOf(const v1::CoreRect& r) { return Rect{r.x(), r.y(), r.width(), r.height()}; }

namespace {

void SetGrid(BoardUsage& u, std::shared_ptr<CoreGrid> grid) {
  auto mers = std::make_shared<std::vector<Rect>>(MaximalEmptyRectangles(*grid));
  u.max_mer_area = LargestArea(*mers);
  u.mers = std::move(mers);
  u.grid = std::move(grid);
}

}  // namespace

void NodeRegistry::RebuildGrids(NodeEntry& entry) {
  entry.usage.resize(std::max<size_t>(entry.usage.size(), entry.record.boards_size()));
  for (const auto& info : entry.record.boards()) {
    if (info.index() >= entry.usage.size()) continue;
    BoardUsage& u = entry.usage[info.index()];
    auto grid = std::make_shared<CoreGrid>(info.width(), info.height());
    for (const auto& c : info.dead_cores()) grid->SetDead(c.x(), c.y());
    u.largest_live = LargestEmptyRectangle(*grid);
    for (const Rect& r : u.rects) grid->Occupy(r);
    SetGrid(u, std::move(grid));
  }
}

void NodeRegistry::CountMeasured(const v1::NodeRecord& record, int sign) {
  for (const auto& b : record.boards()) {
    if (b.measured_ksps() == 0) continue;
    std::vector<uint32_t>& v = measured_[b.type()];
    auto at = std::lower_bound(v.begin(), v.end(), b.measured_ksps());
    if (sign > 0) {
      v.insert(at, b.measured_ksps());
    } else if (at != v.end() && *at == b.measured_ksps()) {
      v.erase(at);
    }
  }
}

uint32_t NodeRegistry::PeerMedianKsps(const std::string& type, uint32_t own) const {
  auto it = measured_.find(type);
  if (it == measured_.end() || it->second.size() < 2) return 0;
  const std::vector<uint32_t>& v = it->second;
  // The others are v without one copy of `own`, at `skip`; their median is the (n-1)/2-th.
  const size_t skip = std::lower_bound(v.begin(), v.end(), own) - v.begin();
  const size_t median = (v.size() - 1) / 2;
  return v[median < skip ? median : median + 1];
}

uint32_t NodeRegistry::MedianKsps(const std::string& type) const {
  auto it = measured_.find(type);
  if (it == measured_.end() || it->second.empty()) return 0;
  return it->second[(it->second.size() - 1) / 2];
}

void NodeRegistry::Restore(v1::NodeRecord record, int64_t now_ms) {
  ++generation_;
  NodeEntry& entry = nodes_[record.name()];
  entry.last_heartbeat_ms = now_ms;
  CountMeasured(entry.record, -1);
  CountMeasured(record, +1);
  entry.record = std::move(record);
  RebuildGrids(entry);
  entry.down_reason = "agent has not registered since the master started";
}

std::string NodeEntry::DrainReason(uint32_t board) const {
  if (!record.drain_reason().empty()) return record.drain_reason();
  auto it = record.board_drain_reasons().find(board);
  return it == record.board_drain_reasons().end() ? "" : it->second;
}

Status NodeRegistry::SetDrain(const std::string& node, int board, const std::string& reason) {
  ++generation_;
  NodeEntry* entry = Find(node);
  if (entry == nullptr) return NotFound("no node named '" + node + "'");
  if (board < 0) {
    entry->record.set_drain_reason(reason);
    return Status::Ok();
  }
  if (board >= entry->record.boards_size()) {
    return NotFound("node " + node + " has no board " + std::to_string(board) + " (it has " +
                    std::to_string(entry->record.boards_size()) + ")");
  }
  auto& boards = *entry->record.mutable_board_drain_reasons();
  if (reason.empty()) {
    boards.erase(static_cast<uint32_t>(board));
  } else {
    boards[static_cast<uint32_t>(board)] = reason;
  }
  return Status::Ok();
}

const v1::NodeRecord* NodeRegistry::Mark(const std::string& node, uint32_t board,
                                         const std::string& name, const std::string& value) {
  NodeEntry* entry = Find(node);
  if (entry == nullptr || board >= static_cast<uint32_t>(entry->record.boards_size())) {
    return nullptr;
  }
  auto& values = *(*entry->record.mutable_board_marks())[board].mutable_values();
  if (values.count(name) == 0 && values.size() >= kMaxBoardMarks) {
    LOG(WARNING) << "board " << node << "/" << board << " has " << values.size()
                 << " marks, the most it holds; not marked " << name;
    return nullptr;
  }
  ++generation_;
  values[name] = value;
  return &entry->record;
}

Status NodeRegistry::SetMarks(const std::string& node, uint32_t board,
                              const std::map<std::string, std::string>& set,
                              const std::vector<std::string>& unset) {
  NodeEntry* entry = Find(node);
  if (entry == nullptr) return NotFound("no node named '" + node + "'");
  if (board >= static_cast<uint32_t>(entry->record.boards_size())) {
    return NotFound("node " + node + " has no board " + std::to_string(board) + " (it has " +
                    std::to_string(entry->record.boards_size()) + ")");
  }
  if (set.empty() && unset.empty()) {
    return InvalidArgument("nothing to change: give NAME=VALUE to mark, NAME to unmark");
  }
  const std::string where = node + "/" + std::to_string(board);
  const auto found = entry->record.board_marks().find(board);
  std::map<std::string, std::string> marks;
  if (found != entry->record.board_marks().end()) {
    marks.insert(found->second.values().begin(), found->second.values().end());
  }
  for (const auto& [name, value] : set) {
    if (Status s = CheckBoardAttribute(name, value); !s.ok()) return s;
    marks[name] = value;
  }
  for (size_t i = 0; i < unset.size(); ++i) {
    const std::string& name = unset[i];
    if (Status s = CheckBoardAttribute(name, ""); !s.ok()) return s;
    if (set.count(name) > 0) {
      return InvalidArgument("attribute '" + name + "' is both marked and unmarked");
    }
    if (std::find(unset.begin(), unset.begin() + static_cast<ptrdiff_t>(i), name) !=
        unset.begin() + static_cast<ptrdiff_t>(i)) {
      return InvalidArgument("attribute '" + name + "' is given twice");
    }
    if (marks.erase(name) == 0) {
      return NotFound("board " + where + " has no mark '" + name +
                      "' (only the master's marks can be removed; the driver's attributes are "
                      "the board's)");
    }
  }
  if (marks.size() > kMaxBoardMarks) {
    return InvalidArgument("board " + where + " would have " + std::to_string(marks.size()) +
                           " marks; it holds at most " + std::to_string(kMaxBoardMarks));
  }
  ++generation_;
  auto& all = *entry->record.mutable_board_marks();
  if (marks.empty()) {
    all.erase(board);
  } else {
    auto& values = *all[board].mutable_values();
    values.clear();
    values.insert(marks.begin(), marks.end());
  }
  return Status::Ok();
}

NodeEntry& NodeRegistry::Register(v1::NodeRecord record, std::shared_ptr<Connection> session,
                                  int64_t now_ms) {
  ++generation_;
  NodeEntry& entry = nodes_[record.name()];
  // Drains belong to the operators, not to the agent's description: keep them.
  record.set_drain_reason(entry.record.drain_reason());
  *record.mutable_board_drain_reasons() = entry.record.board_drain_reasons();
  *record.mutable_board_marks() = entry.record.board_marks();
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
  CountMeasured(entry.record, -1);
  CountMeasured(record, +1);
  entry.record = std::move(record);
  RebuildGrids(entry);
  if (entry.session != session) ++entry.session_epoch;
  entry.session = std::move(session);
  entry.last_heartbeat_ms = now_ms;
  entry.down_reason.clear();
  entry.expired = false;
  return entry;
}

NodeEntry* NodeRegistry::Find(const std::string& name) {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

const NodeEntry* NodeRegistry::Find(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

Status NodeRegistry::Heartbeat(const std::string& name, const Connection* session, int64_t now_ms) {
  NodeEntry* entry = Find(name);
  if (entry == nullptr || entry->session.get() != session) {
    return FailedPrecondition("node '" + name + "' is not registered on this session");
  }
  if (entry->expired) {
    return FailedPrecondition("node '" + name + "' was declared DOWN; register again");
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
    if (!entry.expired && now_ms - entry.last_heartbeat_ms > timeout_ms) {
      entry.expired = true;
      entry.down_reason = "no heartbeat for " +
                          std::to_string((now_ms - entry.last_heartbeat_ms) / 1000) + " s" +
                          (entry.session ? "" : " (agent disconnected)");
      expired.push_back(name);
    }
  }
  return expired;
}

void NodeRegistry::Reserve(const std::string& node, uint32_t board, const v1::Resources& r,
                           const Rect& rect) {
  NodeEntry* entry = Find(node);
  if (entry == nullptr) {
    LOG(WARNING) << "reservation on unknown node " << node;
    return;
  }
  if (board >= entry->usage.size()) entry->usage.resize(board + 1);
  BoardUsage& u = entry->usage[board];
  u.cores += rect.area() > 0 ? rect.area() : r.cores();
  u.ksps += r.ksps();
  u.streams += r.streams();
  u.tasks += 1;
  if (rect.area() > 0) {
    u.rects.push_back(rect);
    if (u.grid) {
      // Copy on write: the scheduler may still hold the previous map.
      auto grid = std::make_shared<CoreGrid>(*u.grid);
      grid->Occupy(rect);
      if (u.mers) {
        auto mers = std::make_shared<std::vector<Rect>>(MaximalEmptyRectanglesAfter(*u.mers, rect));
        u.max_mer_area = LargestArea(*mers);
        u.mers = std::move(mers);
        u.grid = std::move(grid);
      } else {
        SetGrid(u, std::move(grid));
      }
    }
  }
}

void NodeRegistry::Release(const std::string& node, uint32_t board, const v1::Resources& r,
                           const Rect& rect) {
  NodeEntry* entry = Find(node);
  if (entry == nullptr || board >= entry->usage.size()) return;
  BoardUsage& u = entry->usage[board];
  auto sub = [](uint32_t& a, uint32_t b) { a = a >= b ? a - b : 0; };
  sub(u.cores, rect.area() > 0 ? rect.area() : r.cores());
  sub(u.ksps, r.ksps());
  sub(u.streams, r.streams());
  sub(u.tasks, 1);
  auto it = std::find(u.rects.begin(), u.rects.end(), rect);
  if (rect.area() > 0 && it != u.rects.end()) {
    u.rects.erase(it);
    if (u.grid) {
      auto grid = std::make_shared<CoreGrid>(*u.grid);
      grid->Release(rect);
      SetGrid(u, std::move(grid));
    }
  }
}

}  // namespace snn
