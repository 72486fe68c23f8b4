// Operator methods on advance reservations (master/jobs/reservation_book.h):
// `admin.reservation.create` checks, completes and stores one; `admin.reservation.list` shows
// them all (to every user, as Slurm's scontrol show reservation); `admin.reservation.delete`
// removes one. Expired reservations are removed by Expire, from the master's tick.
// Thread contract: only on the master's io thread.
#pragma once

#include <functional>

#include "common/base/clock.h"
#include "common/rpc/rpc_router.h"
#include "master/jobs/job_table.h"
#include "master/jobs/reservation_book.h"
#include "master/nodes/node_registry.h"
#include "master/store/journal.h"

namespace snn {

class ReservationService {
 public:
  ReservationService(ReservationBook& book, JobTable& jobs, NodeRegistry& nodes, Journal& journal,
                     const Clock& clock, std::function<void()> request_schedule)
      : book_(book),
        jobs_(jobs),
        nodes_(nodes),
        journal_(journal),
        clock_(clock),
        request_schedule_(std::move(request_schedule)) {}
  void Register(MethodRouter& router);
  // Removes the reservations that are over, and asks for a pass when one opens or closes.
  void Tick();

 private:
  void Create(const CallContext& ctx, v1::ReservationCreateRequest req,
              Responder<v1::ReservationCreateResponse> r);

  ReservationBook& book_;
  JobTable& jobs_;
  NodeRegistry& nodes_;
  Journal& journal_;
  const Clock& clock_;
  std::function<void()> request_schedule_;
  int64_t next_boundary_ms_ = 0;  // when a pass is next due for an opening or a closing
};

}  // namespace snn
