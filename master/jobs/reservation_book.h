// Advance reservations as the master keeps them (proto/reservation.proto): checked and completed
// at creation (boards chosen for a count; no overlap with another reservation but for
// maintenance; no running job that would still run in it, unless ignore_jobs), expired once
// over, and applied to each scheduling pass: every board a reservation takes is closed to the
// jobs that are not its (master/sched/board_closure.h), and its own jobs are given a pool of
// its boards ("reservation:NAME") while it is open, or wait for it with a reason.
// Thread contract: only on the master's io thread. No I/O: the caller journals what changes.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "master/nodes/node_registry.h"
#include "master/sched/board_closure.h"
#include "master/sched/scheduler.h"
#include "proto/job.pb.h"
#include "proto/reservation.pb.h"

namespace snn {

inline constexpr int64_t kReservationDayMs = 24 * 3600 * 1000LL;
inline constexpr char kReservationKeyPrefix[] = "reservation/";

// A reservation's occurrences as a closure.
BoardClosure ClosureOf(const v1::Reservation& r);

class ReservationBook {
 public:
  void Restore(v1::Reservation r);
  const std::map<std::string, v1::Reservation, std::less<>>& all() const { return book_; }
  const v1::Reservation* Find(std::string_view name) const;

  // Checks a new reservation against the boards, the other reservations and the running jobs,
  // and completes it (its boards, for a count). Returns what to store; nothing changes.
  Result<v1::Reservation> Check(v1::Reservation r, const NodeRegistry& nodes,
                                std::span<const RunningJob> running, int64_t now_ms) const;
  void Add(v1::Reservation r);
  Status Delete(const std::string& name);
  // Removes the reservations that are over (not daily, ended by `now_ms`); returns their names.
  std::vector<std::string> Expire(int64_t now_ms);
  // The next time after `now_ms` at which an occurrence opens or closes (INT64_MAX: none): a
  // pass then starts its jobs, or the others'.
  int64_t NextBoundary(int64_t now_ms) const;

  // At submit, a job naming a reservation: in its pool (filled in when the job names none).
  Status BeforeAdmission(v1::JobSpec& spec) const;
  // Then, with its tenant and time limit known: one of its tenants, and short enough.
  Status AfterAdmission(const v1::JobSpec& spec) const;

  // Applies the reservations to one pass: closures on the boards they take, the pools of those
  // open to their jobs, and each pending job naming one moved to its pool or held with the
  // reason (kept in `holds`, which must outlive the pass).
  using Holds = std::deque<std::shared_ptr<const std::string>>;
  void Apply(SchedulerInput& in, Holds& holds);

 private:
  std::string PoolName(const std::string& reservation);
  std::map<std::string, v1::Reservation, std::less<>> book_;
  // Interned, never removed: pending jobs point here (the start forecasts from another thread).
  std::map<std::string, std::string, std::less<>> pool_names_;
};

}  // namespace snn
