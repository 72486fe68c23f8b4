#include "master/jobs/reservation_book.h"

#include <algorithm>
#include <set>

#include "common/base/duration.h"
#include "common/base/utc_time.h"

namespace snn {
namespace {

std::string BoardName(const std::string& node, uint32_t board) {
  return node + "/" + std::to_string(board);
}

// Whether two reservations are ever closed at once (on boards they share).
bool Overlap(const v1::Reservation& a, const v1::Reservation& b) {
  const BoardClosure ca = ClosureOf(a), cb = ClosureOf(b);
  if (ca.period_ms == 0) return cb.Meets(ca.start_ms, ca.end_ms);
  if (cb.period_ms == 0) return ca.Meets(cb.start_ms, cb.end_ms);
  // Both daily: two occurrences of one from when both have begun cover every phase.
  int64_t s = 0, e = 0;
  for (int64_t k = 0, t = std::max(ca.start_ms, cb.start_ms); k < 2; ++k, t = e) {
    if (!ca.OccurrenceAfter(t, &s, &e)) break;
    if (cb.Meets(s, e)) return true;
  }
  return false;
}

bool SharesBoard(const v1::Reservation& a, const v1::Reservation& b, std::string* which) {
  for (const auto& x : a.boards()) {
    for (const auto& y : b.boards()) {
      if (x.node() == y.node() && x.board() == y.board()) {
        *which = BoardName(x.node(), x.board());
        return true;
      }
    }
  }
  return false;
}

bool ValidName(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

BoardClosure ClosureOf(const v1::Reservation& r) {
  return BoardClosure{r.name(), r.start_ms(), r.start_ms() + r.duration_ms(),
                      r.daily() ? kReservationDayMs : 0};
}

void ReservationBook::Restore(v1::Reservation r) { Add(std::move(r)); }

void ReservationBook::Add(v1::Reservation r) {
  const std::string name = r.name();
  book_[name] = std::move(r);
}

namespace {

// What a reservation says, on its own: a duration, a start not past, who may use it, and
// either its boards or a count of them.
Status CheckTerms(const v1::Reservation& r, int64_t now_ms) {
  if (r.duration_ms() <= 0) return InvalidArgument("a reservation needs a --duration");
  if (r.daily() && r.duration_ms() >= kReservationDayMs) {
    return InvalidArgument("a daily reservation must last less than 24h, not " +
                           FormatDurationUnit(static_cast<uint64_t>(r.duration_ms() / 1000)));
  }
  // A minute's grace: "--start now" reaches the master a moment later.
  if (!r.daily() && r.start_ms() + 60'000 < now_ms) {
    return InvalidArgument("reservation " + r.name() + " would start in the past (" +
                           FormatUtcTime(r.start_ms()) + "); use --start now or a later time");
  }
  if (r.tenants().empty() && !r.maint()) {
    return InvalidArgument(
        "a reservation with no --tenants is closed to every job; name the tenants whose jobs "
        "run in it, or give --flags maint for maintenance");
  }
  for (const std::string& t : r.tenants()) {
    if (t.empty()) return InvalidArgument("a tenant name in --tenants is empty");
  }
  if ((r.boards_size() > 0) == (r.count() > 0)) {
    return InvalidArgument(
        "a reservation names its boards (--boards NODE/BOARD,...) or a count of"
        " them (--count N), one of the two");
  }
  return Status::Ok();
}

}  // namespace

const v1::Reservation* ReservationBook::Find(std::string_view name) const {
  auto it = book_.find(name);
  return it == book_.end() ? nullptr : &it->second;
}

Result<v1::Reservation> ReservationBook::Check(v1::Reservation r, const NodeRegistry& nodes,
                                               std::span<const RunningJob> running,
                                               int64_t now_ms) const {
  if (!ValidName(r.name())) {
    return InvalidArgument("reservation name '" + r.name() +
                           "' must be 1-64 letters, digits, '-', '_' or '.'");
  }
  if (book_.count(r.name())) {
    return AlreadyExists("reservation " + r.name() + " exists (snnctl reservation delete " +
                         r.name() + " first)");
  }
  SNN_RETURN_IF_ERROR(CheckTerms(r, now_ms));
  const BoardClosure closure = ClosureOf(r);
  // Why a board cannot be taken ("" if it can): another reservation, or a running job.
  auto conflict = [&](const std::string& node, uint32_t board) -> std::string {
    v1::Reservation one;
    auto* b = one.add_boards();
    b->set_node(node);
    b->set_board(board);
    for (const auto& [name, other] : book_) {
      std::string shared;
      if (r.maint() || other.maint() || !SharesBoard(one, other, &shared)) continue;
      if (Overlap(r, other)) return "it is in reservation " + name + " at the same time";
    }
    if (r.ignore_jobs()) return "";
    for (const RunningJob& j : running) {
      for (const TaskPlacement& t : j.job->tasks) {
        if (t.node != node || t.board != board) continue;
        if (closure.Meets(now_ms, std::max(now_ms, j.limit_end_ms))) {
          return "job " + std::to_string(j.job->tenant_job_id ? j.job->tenant_job_id : j.job->id) +
                 " of tenant " + j.job->tenant + " may run on it until " +
                 FormatUtcTime(j.limit_end_ms) +
                 " (its time limit); --flags ignore_jobs reserves it anyway";
        }
      }
    }
    return "";
  };
  std::set<std::pair<std::string, uint32_t>> seen;
  for (const auto& b : r.boards()) {
    const NodeEntry* entry = nodes.Find(b.node());
    const bool known = entry != nullptr &&
                       std::any_of(entry->record.boards().begin(), entry->record.boards().end(),
                                   [&](const v1::BoardInfo& i) { return i.index() == b.board(); });
    if (!known) return NotFound("no board " + BoardName(b.node(), b.board()) + " is known");
    if (!seen.insert({b.node(), b.board()}).second) {
      return InvalidArgument("board " + BoardName(b.node(), b.board()) + " is named twice");
    }
    if (std::string why = conflict(b.node(), b.board()); !why.empty()) {
      return FailedPrecondition("board " + BoardName(b.node(), b.board()) + ": " + why);
    }
    if (r.pool().empty() && !entry->record.pools().empty()) r.set_pool(entry->record.pools(0));
  }
  if (r.count() > 0) {
    if (r.pool().empty()) r.set_pool("default");
    uint32_t in_pool = 0;
    std::string last_why;
    for (const auto& [name, entry] : nodes.nodes()) {
      const auto& pools = entry.record.pools();
      if (std::find(pools.begin(), pools.end(), r.pool()) == pools.end()) continue;
      for (const auto& info : entry.record.boards()) {
        if (static_cast<uint32_t>(r.boards_size()) == r.count()) break;
        ++in_pool;
        if (std::string why = conflict(name, info.index()); !why.empty()) {
          last_why = BoardName(name, info.index()) + ": " + why;
          continue;
        }
        auto* b = r.add_boards();
        b->set_node(name);
        b->set_board(info.index());
      }
    }
    if (static_cast<uint32_t>(r.boards_size()) < r.count()) {
      return FailedPrecondition("pool '" + r.pool() + "' has " + std::to_string(r.boards_size()) +
                                " of " + std::to_string(r.count()) + " boards free for it (of " +
                                std::to_string(in_pool) + " looked at)" +
                                (last_why.empty() ? "" : "; " + last_why));
    }
  }
  r.set_created_ms(now_ms);
  return r;
}

Status ReservationBook::Delete(const std::string& name) {
  if (book_.erase(name) == 0) return NotFound("no reservation " + name);
  return Status::Ok();
}

std::vector<std::string> ReservationBook::Expire(int64_t now_ms) {
  std::vector<std::string> gone;
  for (auto it = book_.begin(); it != book_.end();) {
    const v1::Reservation& r = it->second;
    if (!r.daily() && r.start_ms() + r.duration_ms() <= now_ms) {
      gone.push_back(it->first);
      it = book_.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

int64_t ReservationBook::NextBoundary(int64_t now_ms) const {
  int64_t next = INT64_MAX;
  for (const auto& [name, r] : book_) {
    int64_t s = 0, e = 0;
    if (!ClosureOf(r).OccurrenceAfter(now_ms, &s, &e)) continue;
    next = std::min(next, s > now_ms ? s : e);
  }
  return next;
}

Status ReservationBook::BeforeAdmission(v1::JobSpec& spec) const {
  if (spec.reservation().empty()) return Status::Ok();
  const v1::Reservation* r = Find(spec.reservation());
  if (r == nullptr) {
    return NotFound("no reservation " + spec.reservation() + " (snnctl reservation list)");
  }
  if (spec.pool().empty()) spec.set_pool(r->pool());
  if (spec.pool() != r->pool()) {
    return InvalidArgument("reservation " + r->name() + " is in pool '" + r->pool() +
                           "', not in pool '" + spec.pool() + "'");
  }
  if (spec.has_array() || !spec.schedule().empty()) {
    return InvalidArgument("a job array or a recurring job cannot name a reservation (yet)");
  }
  return Status::Ok();
}

Status ReservationBook::AfterAdmission(const v1::JobSpec& spec) const {
  if (spec.reservation().empty()) return Status::Ok();
  const v1::Reservation* r = Find(spec.reservation());
  if (r == nullptr) return NotFound("no reservation " + spec.reservation());
  if (std::find(r->tenants().begin(), r->tenants().end(), spec.tenant()) == r->tenants().end()) {
    return PermissionDenied("tenant " + spec.tenant() + " is not one of reservation " + r->name() +
                            "'s tenants");
  }
  if (!r->flex() && static_cast<int64_t>(spec.time_limit_s()) * 1000 > r->duration_ms()) {
    return InvalidArgument("the job's time limit (" + FormatDurationUnit(spec.time_limit_s()) +
                           ") is longer than reservation " + r->name() + " lasts (" +
                           FormatDurationUnit(static_cast<uint64_t>(r->duration_ms() / 1000)) +
                           "): it could never run in it; ask for less time (time_limit)");
  }
  return Status::Ok();
}

std::string ReservationBook::PoolName(const std::string& reservation) {
  auto it = pool_names_.find(reservation);
  if (it == pool_names_.end()) {
    it = pool_names_.emplace(reservation, "reservation:" + reservation).first;
  }
  return it->second;
}

void ReservationBook::Apply(SchedulerInput& in, Holds& holds) {
  holds.clear();
  const int64_t now = in.now_ms;
  // Each board's closures, and the reservation pools it is in.
  std::map<std::pair<std::string_view, uint32_t>, std::shared_ptr<BoardClosures>> closures;
  std::map<std::pair<std::string_view, uint32_t>, std::vector<std::string>> pools;
  std::map<std::string_view, std::vector<std::string>> pool_wide;   // flex: a whole pool
  std::map<std::string, const v1::Reservation*, std::less<>> open;  // with a pool this pass
  for (const auto& [name, r] : book_) {
    const BoardClosure c = ClosureOf(r);
    int64_t s = 0, e = 0;
    if (!c.OccurrenceAfter(now, &s, &e)) continue;
    for (const auto& b : r.boards()) {
      auto& list = closures[{b.node(), b.board()}];
      if (!list) list = std::make_shared<BoardClosures>();
      list->push_back(c);
    }
    if (r.tenants().empty()) continue;  // maintenance alone: no jobs of its own
    if (r.flex()) {
      pool_wide[r.pool()].push_back(PoolName(name));
    } else if (s <= now) {
      for (const auto& b : r.boards()) pools[{b.node(), b.board()}].push_back(PoolName(name));
    } else {
      continue;
    }
    open[name] = &r;
    in.reservation_pools[PoolName(name)] = ReservationPool{name, r.flex() ? INT64_MAX : e};
  }
  for (BoardCapacity& b : book_.empty() ? std::span<BoardCapacity>() : in.boards) {
    if (auto c = closures.find({b.node, b.board}); c != closures.end()) b.closures = c->second;
    if (auto p = pools.find({b.node, b.board}); p != pools.end()) {
      b.pools.insert(b.pools.end(), p->second.begin(), p->second.end());
    }
    for (size_t i = 0, n = b.pools.size(); i < n && !pool_wide.empty(); ++i) {
      if (auto w = pool_wide.find(b.pools[i]); w != pool_wide.end()) {
        b.pools.insert(b.pools.end(), w->second.begin(), w->second.end());
      }
    }
  }
  for (PendingJob& p : in.pending) {
    if (p.reservation == nullptr) continue;
    if (auto o = open.find(*p.reservation); o != open.end()) {
      p.pool = &pool_names_.find(*p.reservation)->second;
      continue;
    }
    const v1::Reservation* r = Find(*p.reservation);
    int64_t s = 0, e = 0;
    std::string why;
    if (r == nullptr || !ClosureOf(*r).OccurrenceAfter(now, &s, &e)) {
      why = "reservation " + *p.reservation +
            " is over or was deleted: it can never start (snnctl cancel it)";
    } else {
      why = "waiting for reservation " + r->name() + " to start at " + FormatUtcTime(s);
    }
    if (p.hold != nullptr) continue;  // a user's hold or dependencies say more
    holds.push_back(std::make_shared<const std::string>(std::move(why)));
    p.hold = &holds.back();
  }
}

}  // namespace snn
