#include "master/sched/pool_boards.h"

#include <algorithm>
#include <tuple>

#include "common/base/board_constraint.h"
#include "common/base/job_validation.h"

namespace snn {
namespace {

constexpr int kCandidates = 4;  // feasible boards compared before choosing

}  // namespace

void PoolBoards::IndexNodes() const {
  constexpr uint32_t kNone = UINT32_MAX;
  nodes_->next.assign(size(), kNone);
  nodes_->first.reserve(size());
  for (size_t i = size(); i-- > 0;) {  // backwards: each chain in index order
    auto [it, fresh] = nodes_->first.try_emplace((*base_)[i].node, static_cast<uint32_t>(i));
    if (!fresh) {
      nodes_->next[i] = it->second;
      it->second = static_cast<uint32_t>(i);
    }
  }
}

PoolBoards::PoolBoards(std::vector<BoardCapacity> boards)
    : base_(std::make_shared<std::vector<BoardCapacity>>(std::move(boards))),
      changed_(base_->size()) {
  slot_.resize(size());
  key_.resize(size());
  for (size_t i = 0; i < size(); ++i) {
    const uint32_t free = board(i).current().free_count();
    const uint32_t key = KeyOf(i);
    if (by_free_.size() <= key) by_free_.resize(key + 1);
    key_[i] = key;
    slot_[i] = static_cast<uint32_t>(by_free_[key].size());
    by_free_[key].push_back(static_cast<uint32_t>(i));
    free_cores_ += free;
    has_topology_ |= board(i).topology != nullptr;
  }
}

PoolBoards PoolBoards::Fork() const { return *this; }

BoardCapacity& PoolBoards::Writable(size_t index) {
  auto& mine = changed_[index];
  if (!mine || mine.use_count() > 1) {
    auto copy = std::make_shared<BoardCapacity>(board(index));
    if (copy->own) {  // read the map it shares; write a map of its own
      copy->grid = copy->own;
      copy->own.reset();
    }
    mine = std::move(copy);
  }
  return *mine;
}

std::optional<std::string_view> BoardAttribute(const BoardCapacity& b, std::string_view name) {
  if (name == "type") return std::string_view(b.type);
  if (name == "node") return std::string_view(b.node);
  if (b.attributes == nullptr) return std::nullopt;
  auto it = b.attributes->find(name);
  if (it == b.attributes->end()) return std::nullopt;
  return std::string_view(it->second);
}

bool BoardFits(const v1::Resources& r, const BoardCapacity& b) {
  if (!TypeFits(r.board_type(), b)) return false;
  if (r.constraints().empty()) return true;
  const BoardConstraint* c = CompiledConstraint(r.constraints());
  return c != nullptr &&
         c->Matches([&b](std::string_view name) { return BoardAttribute(b, name); });
}

size_t PoolBoards::Find(const std::string& node, uint32_t board_index) const {
  if (size() == 0) return npos;
  if (nodes_->next.empty()) IndexNodes();
  auto it = nodes_->first.find(node);
  if (it == nodes_->first.end()) return npos;
  for (uint32_t i = it->second; i != UINT32_MAX; i = nodes_->next[i]) {
    if ((*base_)[i].board == board_index) return i;
  }
  return npos;
}

std::optional<Placement> PoolBoards::TryBoard(size_t i, const v1::Resources& r,
                                              const CoreRequest& request,
                                              const std::vector<std::optional<BoardHold>>* holds) {
  // Only the caches (free rectangles) are filled in, wherever the board lives.
  BoardCapacity& b = changed_[i] ? *changed_[i] : (*base_)[i];
  if (!BoardFits(r, b)) return std::nullopt;
  if (b.closures && AnyMeets(*b.closures, window_from_, window_to_)) return std::nullopt;
  if (b.ksps_free < r.ksps() || b.streams_free < r.streams()) return std::nullopt;
  const BoardHold* hold = holds && (*holds)[i] ? &*(*holds)[i] : nullptr;
  const CoreGrid& grid = b.current();
  if (hold == nullptr && grid.width() * grid.height() == 1) {  // a one-core board
    if (grid.free_count() == 0 || request.cores() != 1) return std::nullopt;
    return Placement{Rect{0, 0, 1, 1}, 0, 4};
  }
  if (hold == nullptr) {
    if (!b.mers) {
      auto mers = std::make_shared<std::vector<Rect>>(MaximalEmptyRectangles(b.current()));
      b.max_mer_area = LargestArea(*mers);
      b.mers = std::move(mers);
    }
    if (b.max_mer_area < request.cores()) return std::nullopt;  // no rectangle is big enough
    return PlaceCores(b.current(), *b.mers, request, FitPolicy::kBestFit);
  }
  if (hold->ksps_left < r.ksps() || hold->streams_left < r.streams()) return std::nullopt;
  CoreGrid held = b.current();  // the reserved rectangle counts as taken
  for (const Rect& rect : hold->rects) {
    for (uint32_t y = rect.y; y < rect.y + rect.h; ++y) {
      for (uint32_t x = rect.x; x < rect.x + rect.w; ++x) {
        if (held.free(x, y)) held.Occupy(Rect{x, y, 1, 1});
      }
    }
  }
  if (held.free_count() < request.cores()) return std::nullopt;
  return PlaceCores(held, request, FitPolicy::kBestFit);
}

std::optional<BoardChoice> PoolBoards::Choose(const v1::Resources& r, const CoreRequest& request,
                                              const std::vector<std::optional<BoardHold>>* holds,
                                              const std::vector<char>* prefer_not) {
  std::optional<BoardChoice> best, fallback;
  auto key = [&](const BoardChoice& c) {
    return std::make_tuple(c.placement.waste, -int64_t{c.placement.contact},
                           -int64_t{board(c.index).health}, c.index);
  };
  int found = 0;
  for (size_t bucket_key = request.cores(); bucket_key < by_free_.size(); ++bucket_key) {
    auto& bucket = by_free_[bucket_key];
    for (size_t k = 0; k < bucket.size();) {
      const uint32_t i = bucket[k];
      const bool avoid = prefer_not && (*prefer_not)[i];
      if (avoid && fallback) {  // one fallback is enough
        ++k;
        continue;
      }
      auto p = TryBoard(i, r, request, holds);
      if (KeyOf(i) != key_[i]) {
        Reindex(
            i);  // its rectangles are known now: down to a bucket already passed; slot k refilled
      } else {
        ++k;
      }
      if (!p) continue;
      BoardChoice c{i, *p};
      if (avoid) {
        fallback = c;
        continue;
      }
      if (!best || key(c) < key(*best)) best = c;
      if (++found >= kCandidates || p->waste == 0) return best;
    }
  }
  return best ? best : fallback;
}

const BoardCapacity* PoolBoards::Roomiest(const v1::Resources& r, uint32_t cores,
                                          size_t looked) const {
  const BoardCapacity* best = nullptr;
  for (size_t key = by_free_.size(); key-- > 0 && looked > 0;) {
    for (uint32_t i : by_free_[key]) {
      if (looked == 0) break;
      --looked;
      const BoardCapacity& b = board(i);
      const uint32_t free = b.current().free_count();
      if (b.ksps_free >= r.ksps() && b.streams_free >= r.streams() && free >= cores &&
          (!best || free > best->current().free_count()) && BoardFits(r, b)) {
        best = &b;
      }
    }
  }
  return best;
}

size_t PoolBoards::BoardsThatMightHold(uint32_t cores) const {
  size_t n = 0;
  for (size_t k = cores; k < by_free_.size(); ++k) n += by_free_[k].size();
  return n;
}

uint32_t PoolBoards::KeyOf(size_t index) const {
  const BoardCapacity& b = board(index);
  const uint32_t free = b.current().free_count();
  return b.mers ? std::min(free, b.max_mer_area) : free;
}

void PoolBoards::Reindex(size_t index) {
  const uint32_t old_key = key_[index], now = KeyOf(index);
  if (now == old_key) return;
  auto& from = by_free_[old_key];  // swap-remove, then append to the new bucket
  const uint32_t moved = from.back();
  from[slot_[index]] = moved;
  slot_[moved] = slot_[index];
  from.pop_back();
  if (by_free_.size() <= now) by_free_.resize(now + 1);
  key_[index] = now;
  slot_[index] = static_cast<uint32_t>(by_free_[now].size());
  by_free_[now].push_back(static_cast<uint32_t>(index));
}

void PoolBoards::Take(size_t index, const v1::Resources& r, const Rect& rect) {
  BoardCapacity& b = Writable(index);
  const uint32_t old_free = b.current().free_count();
  if (!b.own || b.own.use_count() > 1) b.own = std::make_shared<CoreGrid>(b.current());
  b.own->Occupy(rect);
  b.ksps_free -= std::min(b.ksps_free, r.ksps());
  b.streams_free -= std::min(b.streams_free, r.streams());
  if (b.mers) {  // kept up to date from the last ones: the next task tried here needs them
    auto mers = std::make_shared<std::vector<Rect>>(MaximalEmptyRectanglesAfter(*b.mers, rect));
    b.max_mer_area = LargestArea(*mers);
    b.mers = std::move(mers);
  }
  free_cores_ = free_cores_ - old_free + b.current().free_count();
  Reindex(index);
}

void PoolBoards::GiveBack(size_t index, const v1::Resources& r, const Rect& rect) {
  BoardCapacity& b = Writable(index);
  const uint32_t old_free = b.current().free_count();
  if (!b.own || b.own.use_count() > 1) b.own = std::make_shared<CoreGrid>(b.current());
  b.own->Release(rect);
  b.ksps_free = std::min(b.ksps_total, b.ksps_free + r.ksps());
  b.streams_free = std::min(b.streams_total, b.streams_free + r.streams());
  b.mers.reset();
  free_cores_ = free_cores_ - old_free + b.current().free_count();
  Reindex(index);
}

}  // namespace snn
