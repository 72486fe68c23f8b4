// The scheduler's vocabulary: the jobs it is given (pending, running), the policy, the boards'
// free capacity, and the plan it returns (starts, waits, preemptions, grows, shrinks), with the
// small methods on them (scheduler_types.cc). The pass itself: master/sched/scheduler.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "master/sched/pool_boards.h"
#include "master/sched/quota_tree.h"

namespace snn {

struct TaskPlacement {
  std::string node;
  uint32_t board = 0;
  Rect rect;
  // Running jobs only: the task's index, and whether it is an elastic extra (beyond the
  // job's min replicas), which the job gives back when another job needs the room.
  uint32_t index = 0;
  bool extra = false;
  // On a class of one-core boards (BoardCapacity::units): this many tasks, one board each.
  uint32_t count = 1;
};

struct SchedJob {
  uint64_t id = 0;
  uint64_t tenant_job_id = 0;  // the number its tenant knows it by (0: the same as id)
  std::string pool, tenant, queue;
  std::string user;                          // who submitted it
  const v1::Resources* resources = nullptr;  // one replica's; must outlive the pass
  // The licenses it holds while it runs (JobSpec.licenses; null: none); must outlive the pass.
  const google::protobuf::Map<std::string, uint32_t>* licenses = nullptr;
  uint32_t replicas = 1;      // to start with (min); running: the active tasks
  uint32_t max_replicas = 0;  // elastic: grows toward this while boards are idle (0: never)
  int64_t submit_ms = 0;
  int64_t time_limit_ms = 0;  // the estimate reservations and backfill rely on
  bool preemptible = false;
  // A session or an experiment service: held for people at work, never preempted, and in an
  // account tree it never borrows (master/sched/quota_tree.h).
  bool interactive = false;
  // A gang's placement (JobSpec.spread): by default packed where the pool declares topology.
  enum class Spread : uint8_t { kDefault, kPack, kSpread };
  Spread spread = Spread::kDefault;
  std::pair<int32_t, int32_t> tier{0, 0};  // (queue priority, job priority): who may preempt
  // A job array (JobSpec.array): the pass may start several of its elements, each a start
  // decision of its own (master/jobs/job_arrays.h).
  bool array = false;
  // The advance reservation it runs in (JobSpec.reservation; "": none).
  std::string reservation;
  // Pending jobs that may not start (a user's hold, dependencies): why; null otherwise.
  std::shared_ptr<const std::string> hold;
  // Running jobs only.
  int64_t start_ms = 0;
  std::vector<TaskPlacement> tasks;

  uint64_t cores() const;  // over every replica
};

// Caps in cores over every task in one pool; `guaranteed` may be reclaimed by preemption.
struct Quota {
  uint64_t limit = UINT64_MAX;
  uint64_t guaranteed = 0;
};

// Orders (name, name) pairs and finds them by std::string_view pairs without copying.
struct NamePairLess {
  using is_transparent = void;
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    return std::pair<std::string_view, std::string_view>(a.first, a.second) <
           std::pair<std::string_view, std::string_view>(b.first, b.second);
  }
};
using NamePair = std::pair<std::string_view, std::string_view>;

// Core-hours in any window of window_ms (v1::UsageLimits.max_core_hours). core_ms 0: no limit.
struct CoreHourLimit {
  double core_ms = 0;
  int64_t window_ms = 0;
};

struct SchedulerPolicy {
  // Tenants whose jobs may not start (over their budget), with the reason their jobs show.
  std::map<std::string, std::shared_ptr<const std::string>, std::less<>> held_tenants;
  bool backfill = true;  // EASY; false: FCFS
  // On a class of one-core boards (BoardCapacity::units), what jobs still running when the
  // reservation starts may take: false, every board free then (all the jobs ending at that time
  // give theirs back, as the boards will be, and as the placing path counts); true, the
  // textbook EASY of the literature, which stops at the first release that makes the head fit
  // (the reference replays of ../shared/traces use it).
  bool textbook_easy = false;
  // Say why each job waits. Without it a pass records no waits at all (the simulator and the
  // master's quick passes read none), and stops trying a full pool's backfill candidates.
  bool explain = true;
  bool backfill_shortest_first = false;  // try backfill candidates shortest time limit first
  // With shortest-first backfill, jobs waiting longer than this are tried first, in queue order:
  // small short jobs fill the holes, but not for ever ahead of old ones. 0: off.
  int64_t backfill_age_first_after_ms = 0;
  // With shortest-first backfill, while the job holding a pool's reservation is starving
  // (PendingJob::starving), the candidates that would run past the reservation's start (on the
  // boards it leaves over) are tried after the others, in priority order rather than shortest
  // first: held back while young, long jobs would otherwise all come at once onto what the
  // starving job's successors need.
  bool backfill_past_reservation_by_priority = false;
  bool preemption = true;
  // Elastic jobs grow on what is idle once every pending job had its turn. A pass that sees
  // only the head of the queue must not: the room may be what a job further back needs.
  bool grow = true;
  int64_t preempt_grace_ms = 60'000;
  std::map<std::pair<std::string, std::string>, Quota, NamePairLess>
      tenant_quotas;  // (tenant, pool)
  std::map<std::pair<std::string, std::string>, Quota, NamePairLess> queue_quotas;  // (queue, pool)
  // The account tree's quotas, by pool (master/sched/quota_tree.h); null: none.
  std::shared_ptr<const QuotaTrees> quota_trees;
  // Jobs running at once (v1::UsageLimits.max_running): each user's, and each tenant's
  // together. 0 / absent: no limit.
  uint32_t user_max_running = 0;
  std::map<std::string, uint32_t, std::less<>> tenant_max_running;
  // Site-wide licenses: how many of each there are (v1::SchedulingConfig.licenses).
  std::map<std::string, uint32_t, std::less<>> licenses;
  // Core-hours in a sliding window (master/sched/window_limits.h): each user's, and each
  // tenant's together.
  CoreHourLimit user_core_hours;
  std::map<std::string, CoreHourLimit, std::less<>> tenant_core_hours;
};

// The core-time of the task attempts that ended within each limited user's and tenant's window
// (SchedulerPolicy.user_core_hours, tenant_core_hours), in core-ms; absent: none.
struct EndedCoreTime {
  std::map<std::string, double, std::less<>> users, tenants;
};

// A running job at a glance: a pass reads hundreds of thousands of these in a row, and looks
// at the job itself only when it needs more.
struct RunningJob {
  const SchedJob* job = nullptr;
  const std::string* pool = nullptr;  // the job's pool; jobs of one pool may share the pointer
  int64_t limit_end_ms = 0;           // start + time limit
  bool preemptible = false;
  bool elastic = false;  // max_replicas > 0

  static RunningJob Of(const SchedJob& j) {
    return RunningJob{&j, &j.pool, j.start_ms + j.time_limit_ms, j.preemptible, j.max_replicas > 0};
  }
};

// A pending job at a glance, copied into the pass's list in priority order: most pending jobs
// wait for a reason another job of the same shape already found, and a pass settles them from
// this alone, without reaching for the job or its request.
struct PendingJob {
  const SchedJob* job = nullptr;
  uint64_t id = 0;
  const std::string* pool = nullptr;         // jobs of one pool may share the pointer
  const std::string* board_type = nullptr;   // likewise
  const std::string* constraints = nullptr;  // likewise
  const std::string* tenant = nullptr;       // likewise
  const std::string* queue = nullptr;        // likewise
  const std::string* user = nullptr;
  int64_t submit_ms = 0, time_limit_ms = 0;
  // Per replica; cores as placed (a shape's area when it has one).
  uint32_t cores = 0, shape_width = 0, shape_height = 0, ksps = 0, streams = 0;
  uint32_t replicas = 1;
  bool licenses = false;  // it asks for licenses (SchedJob::licenses)
  bool array = false;     // a job array (SchedJob::array)
  // The advance reservation it names (SchedJob::reservation); null: none. The master moves such
  // a job to the reservation's pool, or holds it, before the pass (master/jobs/reservation_book.h).
  const std::string* reservation = nullptr;
  // The job's hold (SchedJob::hold) when it has one: a pass settles held jobs from here, and
  // touches no SchedJob for the others.
  const std::shared_ptr<const std::string>* hold = nullptr;
  // How long it is expected to run: its user's last two jobs' mean, at most its limit
  // (runtime_prediction.h; 0: no prediction, its limit). The priority's slowdown factor is
  // worked out on it; every decision that could delay another job (reservations, backfill) is
  // still taken on time limits.
  int64_t predicted_ms = 0;
  // Set by the queue order: the job's multifactor priority (PriorityFactors::total) and queue
  // tier, and whether it waited past the starvation guard.
  double priority = 0;
  int32_t tier = 0;
  bool starving = false;

  static PendingJob Of(const SchedJob& j);
};

// Cores the running jobs hold, per (tenant, pool) and per (queue, pool): what quotas are
// judged against. The master keeps it as jobs start and stop, so a pass does not add up every
// running job again.
class QuotaUse {
 public:
  uint64_t& Tenant(const std::string& tenant, const std::string& pool) {
    return At(tenants_, tenant, pool);
  }
  uint64_t& Queue(const std::string& queue, const std::string& pool) {
    return At(queues_, queue, pool);
  }
  // A running job's `cores` start (sign 1) or stop (-1) counting.
  void Add(const SchedJob& job, uint64_t cores, int sign);

 private:
  using Map = std::map<std::pair<std::string, std::string>, uint64_t, NamePairLess>;
  static uint64_t& At(Map& map, const std::string& who, const std::string& pool);

  Map tenants_, queues_;
};

// A pool made for an advance reservation's own jobs (the master names it after the
// reservation): its boards are the reservation's, open to these jobs whatever the
// reservation's closures say, and a job starts there only if its time limit ends by
// `ends_by_ms` (the reservation's end; INT64_MAX: a flex reservation, whose jobs may outlast it).
struct ReservationPool {
  std::string reservation;
  int64_t ends_by_ms = INT64_MAX;
};

struct SchedulerInput {
  std::vector<PendingJob> pending;      // in priority order; the jobs must outlive the pass
  std::span<const RunningJob> running;  // must outlive the pass
  // The running jobs' use, when the caller keeps it (null: the pass adds it up).
  const QuotaUse* use = nullptr;
  std::vector<BoardCapacity> boards;
  int64_t now_ms = 0;
  // With core-hour limits: what ended within their windows (null: nothing).
  std::shared_ptr<const EndedCoreTime> ended;
  // By pool name: the pools that are advance reservations' (boards list them in `pools`).
  std::map<std::string, ReservationPool, std::less<>> reservation_pools;
};

struct StartDecision {
  uint64_t job_id = 0;
  std::vector<TaskPlacement> tasks;  // one per replica
  bool backfilled = false;           // started behind its pool's reservation for an earlier job
};

struct WaitDecision {
  uint64_t job_id = 0;
  // Shared: the many jobs of one shape waiting for the same reason share one text.
  std::shared_ptr<const std::string> reason;
  int64_t expected_start_ms = 0;  // set for the job holding its pool's reservation

  const std::string& why() const { return *reason; }
};

struct PreemptDecision {
  uint64_t job_id = 0;
  uint64_t for_job = 0;
  std::string reason;
};

// A running elastic job's extra replicas: added on idle boards, or given back.
struct GrowDecision {
  uint64_t job_id = 0;
  std::vector<TaskPlacement> tasks;  // new replicas (their index is left to the caller)
};

struct ShrinkDecision {
  uint64_t job_id = 0;
  std::vector<uint32_t> tasks;  // indices of the extra replicas to stop
  uint64_t for_job = 0;
  std::string reason;
};

struct SchedulePlan {
  std::vector<StartDecision> starts;
  std::vector<WaitDecision> waits;
  std::vector<PreemptDecision> preemptions;
  std::vector<GrowDecision> grows;
  std::vector<ShrinkDecision> shrinks;
};

// Whether this board, empty, could hold one task with resources `r`.
bool BoardCanEverHold(const BoardCapacity& board, const v1::Resources& r);

}  // namespace snn
