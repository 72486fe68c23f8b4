#include "master/sched/gang_topology.h"

#include <algorithm>
#include <cstdio>

#include "common/base/job_validation.h"

namespace snn {
namespace {

// First boards tried; fewer on very large pools, where each try walks every board.
constexpr size_t kAnchors = 8;
constexpr size_t kLargePool = 4096;

bool HasLink(const BoardCapacity& from, const BoardCapacity& to) {
  if (!from.topology) return false;
  for (const auto& [node, board] : from.topology->links) {
    if (board == to.board && node == to.node) return true;
  }
  return false;
}

// The gang's boards so far, and each board's closeness to the nearest (farthest) of them.
struct Distances {
  std::vector<size_t> members;
  std::vector<Closeness> nearest, farthest;
};

void Add(const PoolBoards& boards, size_t member, Distances& d) {
  d.members.push_back(member);
  const BoardCapacity& m = boards.board(member);
  for (size_t i = 0; i < boards.size(); ++i) {
    const Closeness c = CloseOf(boards.board(i), i, m, member);
    d.nearest[i] = std::min(d.nearest[i], c);
    d.farthest[i] = std::max(d.farthest[i], c);
  }
}

// The gang from `anchor`'s choice: the other replicas at the best distance each can have.
std::optional<std::pair<Gang, int>> GrowFrom(PoolBoards& trial, const SchedJob& job,
                                             const v1::Resources& r, const CoreRequest& request,
                                             const Holds* holds, const BoardChoice& anchor,
                                             bool spread) {
  Distances d{{},
              std::vector<Closeness>(trial.size(), Closeness::kElsewhere),
              std::vector<Closeness>(trial.size(), Closeness::kSameBoard)};
  Gang gang;
  trial.Take(anchor.index, r, anchor.placement.rect);
  gang.emplace_back(anchor.index, anchor.placement.rect);
  Add(trial, anchor.index, d);
  std::vector<char> avoid(trial.size());
  for (uint32_t k = 1; k < job.replicas; ++k) {
    std::optional<BoardChoice> chosen;
    for (int step = 0; step <= 4 && !chosen; ++step) {
      // Pack: boards within `step` of some member; spread: at least 4 - step from all of them.
      const int limit = spread ? 4 - step : step;
      for (size_t i = 0; i < trial.size(); ++i) {
        avoid[i] = spread ? static_cast<int>(d.nearest[i]) < limit
                          : static_cast<int>(d.nearest[i]) > limit;
      }
      auto c = trial.Choose(r, request, holds, &avoid);
      if (c && !avoid[c->index]) chosen = c;
    }
    if (!chosen) return std::nullopt;
    trial.Take(chosen->index, r, chosen->placement.rect);
    gang.emplace_back(chosen->index, chosen->placement.rect);
    Add(trial, chosen->index, d);
  }
  int score = 0;  // the sum over pairs
  for (size_t a = 0; a < gang.size(); ++a) {
    for (size_t b = a + 1; b < gang.size(); ++b) {
      score += static_cast<int>(CloseOf(trial.board(gang[a].first), gang[a].first,
                                        trial.board(gang[b].first), gang[b].first));
    }
  }
  return std::make_pair(std::move(gang), spread ? -score : score);
}

std::string Number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace

Closeness CloseOf(const BoardCapacity& a, size_t index_a, const BoardCapacity& b, size_t index_b) {
  if (index_a == index_b) return Closeness::kSameBoard;
  if (HasLink(a, b) || HasLink(b, a)) return Closeness::kLinked;
  if (a.node == b.node) return Closeness::kSameNode;
  if (a.topology && b.topology && !a.topology->switch_name.empty() &&
      a.topology->switch_name == b.topology->switch_name) {
    return Closeness::kSameSwitch;
  }
  return Closeness::kElsewhere;
}

std::optional<Gang> PlaceGangByTopology(PoolBoards& boards, const SchedJob& job, const Holds* holds,
                                        const std::vector<char>* prefer_not, bool spread) {
  if (boards.free_cores() < job.cores()) return std::nullopt;
  const v1::Resources& r = *job.resources;
  const CoreRequest request = CoreRequestOf(r);
  // Anchors: the boards Choose likes best for one replica, one after another.
  std::vector<char> tried = prefer_not ? *prefer_not : std::vector<char>(boards.size(), 0);
  const size_t anchors = boards.size() > kLargePool ? 2 : kAnchors;
  std::optional<std::pair<Gang, int>> best;
  std::optional<PoolBoards> best_boards;
  for (int round = 0; round < 2 && !best; ++round) {
    if (round == 1) {  // only boards to use if no other fits could hold it
      if (prefer_not == nullptr) break;
      tried.assign(boards.size(), 0);
    }
    for (size_t n = 0; n < anchors; ++n) {
      auto anchor = boards.Choose(r, request, holds, &tried);
      if (!anchor || tried[anchor->index]) break;
      tried[anchor->index] = 1;
      PoolBoards trial = boards.Fork();
      auto gang = GrowFrom(trial, job, r, request, holds, *anchor, spread);
      if (gang && (!best || gang->second < best->second)) {
        best = std::move(gang);
        best_boards = std::move(trial);
      }
    }
  }
  if (!best) return std::nullopt;
  boards = std::move(*best_boards);
  return std::move(best->first);
}

std::string DescribeCloseness(const v1::NodeRecord& node_a, uint32_t a,
                              const v1::NodeRecord& node_b, uint32_t b) {
  if (node_a.name() == node_b.name() && a == b) return "same board";
  auto find = [](const v1::NodeRecord& from, uint32_t board, const std::string& to_node,
                 uint32_t to_board) -> const v1::BoardLink* {
    for (const auto& l : from.links()) {
      if (l.board() == board && l.to_node() == to_node && l.to_board() == to_board) return &l;
    }
    return nullptr;
  };
  const v1::BoardLink* link = find(node_a, a, node_b.name(), b);
  if (link == nullptr) link = find(node_b, b, node_a.name(), a);
  if (link != nullptr) {
    std::string words;
    if (link->gbps() > 0) words += Number(link->gbps()) + " Gb/s";
    if (link->latency_us() > 0) {
      words += (words.empty() ? "" : ", ") + Number(link->latency_us()) + " us";
    }
    return "linked" + (words.empty() ? "" : " (" + words + ")");
  }
  if (node_a.name() == node_b.name()) return "same node";
  if (!node_a.switch_name().empty() && node_a.switch_name() == node_b.switch_name()) {
    return "same switch " + node_a.switch_name();
  }
  return "elsewhere";
}

}  // namespace snn
