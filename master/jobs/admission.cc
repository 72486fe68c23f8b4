#include "master/jobs/admission.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/base/board_constraint.h"
#include "common/base/duration.h"
#include "common/base/job_validation.h"
#include "common/model/model.h"
#include "common/model/nir_dynamics.h"
#include "master/sched/policy_config.h"

namespace snn {

namespace {

// A model's network comes with the job: snnctl read it as the user. The agent builds it from
// this copy only, so the master checks it as it would a model file.
Status ValidateNetwork(v1::TaskSpec& task) {
  if (!task.has_network()) {
    if (task.resources().model().empty()) return Status::Ok();
    return InvalidArgument("task.resources.model names " + task.resources().model() +
                           " but the job carries no network: submit it with this version's snnctl");
  }
  Status s = ValidateModel(*task.mutable_network());
  if (!s.ok()) return InvalidArgument("task.network: " + s.message());
  // The board returns spikes: an output giving values would be refused when it loads, after
  // the job waited its turn. Said now, with where the values can be had.
  if (task.network().dynamics() == "nir") {
    for (const v1::Population& p : task.network().populations()) {
      if (p.role() == "output" && NirKindIsGraded(p.nir().kind())) {
        return InvalidArgument("task.network: output layer '" + p.name() + "' (" + p.nir().kind() +
                               ") gives values, not spikes, and the board returns spikes only; "
                               "snnctl simulate writes its values");
      }
    }
  }
  return Status::Ok();
}

// A constraint no board of the pool (of the type asked) meets can never be met until the
// boards change: refused, naming what the boards have of each attribute it compares.
Status CheckConstraintsCanBeMet(const v1::JobSpec& spec,
                                const std::vector<const BoardClass*>& pool_boards) {
  const v1::Resources& r = spec.task().resources();
  if (r.constraints().empty()) return Status::Ok();
  const BoardConstraint* constraint = CompiledConstraint(r.constraints());
  if (constraint == nullptr) return BoardConstraint::Parse(r.constraints()).status();
  bool any_typed = false;
  for (const BoardClass* c : pool_boards) {
    if (!TypeFits(r.board_type(), c->board)) continue;
    if (BoardFits(r, c->board)) return Status::Ok();
    any_typed = true;
  }
  if (!any_typed) return Status::Ok();  // "no board of type ..." says it
  std::string have;
  for (const std::string& name : constraint->names()) {
    std::set<std::string> values;
    for (const BoardClass* c : pool_boards) {
      if (!TypeFits(r.board_type(), c->board)) continue;
      if (auto v = BoardAttribute(c->board, name)) values.insert(std::string(v->substr(0, 64)));
    }
    std::string said;
    size_t shown = 0;
    for (const auto& v : values) {
      if (++shown > 6) {
        said += ", ...";
        break;
      }
      said += (said.empty() ? "" : ", ") + v;
    }
    have +=
        (have.empty() ? "" : "; ") + (values.empty() ? "none reports " + name : name + ": " + said);
  }
  return InvalidArgument("no board in pool '" + spec.pool() + "'" +
                         (AnyBoardType(r.board_type()) ? "" : " of type '" + r.board_type() + "'") +
                         " meets the constraints '" + r.constraints() + "' (its boards have " +
                         have + ")");
}

}  // namespace

std::vector<BoardClass> ClassifyBoards(std::vector<BoardCapacity> boards) {
  using Key = std::tuple<std::vector<std::string>, std::string, uint32_t, uint32_t, uint32_t,
                         uint32_t, uint32_t, BoardCapacity::Attributes>;
  std::map<Key, size_t> index;
  std::vector<BoardClass> classes;
  for (auto& b : boards) {
    std::sort(b.pools.begin(), b.pools.end());
    Key key{b.pools,          b.type,
            b.health,         b.ksps_total,
            b.streams_total,  b.largest_live.w,
            b.largest_live.h, b.attributes ? *b.attributes : BoardCapacity::Attributes()};
    auto [it, added] = index.emplace(std::move(key), classes.size());
    if (!added) {
      ++classes[it->second].count;
      continue;
    }
    b.grid.reset();  // admission never looks at what is free now
    b.mers.reset();
    classes.push_back(BoardClass{std::move(b), 1});
  }
  return classes;
}
namespace {

// What the job left out, from the site's defaults; a session's and a service's fixed terms.
Status FillDefaults(v1::JobSpec& spec, const std::string& user, const AdmissionLimits& limits) {
  if (spec.pool().empty()) spec.set_pool(limits.default_pool);
  if (spec.queue().empty()) spec.set_queue(limits.default_queue);
  if (spec.tenant().empty()) spec.set_tenant(user);
  if (spec.min_replicas() == 0) spec.set_min_replicas(1);
  if (spec.max_replicas() == 0) spec.set_max_replicas(spec.min_replicas());
  if (spec.task().resources().streams() == 0) {
    spec.mutable_task()->mutable_resources()->set_streams(1);
  }
  if (spec.time_limit_s() == 0) spec.set_time_limit_s(limits.default_time_limit_s);
  if (!v1::JobKind_IsValid(spec.kind())) {
    return InvalidArgument("kind " + std::to_string(spec.kind()) +
                           " is unknown (kinds: BATCH, SESSION, STEP, SERVICE)");
  }
  if (spec.kind() == v1::SESSION || spec.kind() == v1::SERVICE) {
    if (spec.kind() == v1::SESSION && spec.keepalive_s() == 0) {
      spec.set_keepalive_s(limits.default_keepalive_s);
    }
    // A session that lost its boards ends: its client must know, not find it elsewhere.
    spec.set_no_requeue(true);
    spec.set_preemptible(false);  // nor is it taken away for another job
    if (spec.max_replicas() != spec.min_replicas()) {
      return InvalidArgument(std::string(spec.kind() == v1::SESSION ? "a session" : "a service") +
                             " holds a fixed number of replicas (replicas.max " +
                             std::to_string(spec.max_replicas()) + " != replicas.min " +
                             std::to_string(spec.min_replicas()) + ")");
    }
  }
  return Status::Ok();
}

// Units turned into ksps; its queue, licenses and time limit as the policy has them.
Status CheckAgainstPolicy(v1::JobSpec& spec, const AdmissionLimits& limits,
                          const v1::SchedulingConfig& scheduling) {
  if (v1::Resources& r = *spec.mutable_task()->mutable_resources(); r.units() > 0) {
    if (r.ksps() != 0) return InvalidArgument("task.resources: give ksps or units, not both");
    const double ksps = std::ceil(r.units() * limits.unit_ksps);
    if (ksps > JobLimits::kMaxKsps) {
      return InvalidArgument("task.resources.units " + FormatUnits(r.units()) + " is " +
                             std::to_string(static_cast<uint64_t>(ksps)) + " ksps at " +
                             FormatUnits(limits.unit_ksps) + " ksps a unit; at most " +
                             std::to_string(JobLimits::kMaxKsps) + " are accepted");
    }
    r.set_ksps(static_cast<uint32_t>(std::max(1.0, ksps)));
  }
  SNN_RETURN_IF_ERROR(ValidateNetwork(*spec.mutable_task()));
  if (FindQueue(scheduling, spec.queue()) == nullptr) {
    std::string known;
    for (const auto& q : scheduling.queues()) known += (known.empty() ? "" : ", ") + q.name();
    return InvalidArgument("unknown queue '" + spec.queue() + "' (queues: " + known + ")");
  }
  for (const auto& [name, count] : spec.licenses()) {
    auto total = scheduling.licenses().find(name);
    if (total == scheduling.licenses().end()) {
      std::string known;
      for (const auto& l : std::map<std::string, uint32_t>(scheduling.licenses().begin(),
                                                           scheduling.licenses().end())) {
        known += (known.empty() ? "" : ", ") + l.first + " (" + std::to_string(l.second) + ")";
      }
      return InvalidArgument("unknown license '" + name +
                             "' (the policy's licenses: " + (known.empty() ? "none" : known) + ")");
    }
    if (count > total->second) {
      return InvalidArgument("licenses: the job asks for " + std::to_string(count) + " " + name +
                             ", but the site has " + std::to_string(total->second));
    }
  }
  if (spec.time_limit_s() > limits.max_time_limit_s) {
    return InvalidArgument("time_limit " + FormatDurationSeconds(spec.time_limit_s()) +
                           " is above this cluster's maximum of " +
                           FormatDurationSeconds(limits.max_time_limit_s));
  }
  return Status::Ok();
}

// Could this job ever run? Judged against every board known in the pool, up or not.
Status CheckCanEverRun(const v1::JobSpec& spec, const std::vector<BoardClass>& boards) {
  const v1::Resources& r = spec.task().resources();
  std::vector<const BoardClass*> pool_boards;
  std::set<std::string> known_pools;
  for (const auto& c : boards) {
    const BoardCapacity& b = c.board;
    known_pools.insert(b.pools.begin(), b.pools.end());
    if (std::find(b.pools.begin(), b.pools.end(), spec.pool()) != b.pools.end()) {
      pool_boards.push_back(&c);
    }
  }
  if (pool_boards.empty()) {
    std::string known;
    for (const auto& p : known_pools) known += (known.empty() ? "" : ", ") + p;
    return InvalidArgument(
        "pool '" + spec.pool() + "' has no boards" +
        (known.empty() ? " (no agent has registered yet)" : " (known pools: " + known + ")"));
  }
  SNN_RETURN_IF_ERROR(CheckConstraintsCanBeMet(spec, pool_boards));
  // Per board type, the healthiest board (then the one with the largest live rectangle)
  // decides whether a task of this shape can ever run; every board counts toward replicas.
  const CoreRequest request = CoreRequestOf(r);
  std::map<std::string, const BoardCapacity*> healthiest;
  uint64_t replicas_possible = 0;
  for (const BoardClass* board_class : pool_boards) {
    const BoardCapacity& b = board_class->board;
    if (!BoardFits(r, b)) continue;
    const BoardCapacity*& h = healthiest[b.type];
    if (h == nullptr || b.health > h->health ||
        (b.health == h->health && b.largest_live.area() > h->largest_live.area())) {
      h = &b;
    }
    if (b.health == 0 || !BoardCanEverHold(b, r)) continue;
    replicas_possible +=
        board_class->count * std::min({b.ksps_total / r.ksps(), b.streams_total / r.streams(),
                                       std::max(1u, b.largest_live.area() / request.cores())});
  }
  if (healthiest.empty()) {
    return InvalidArgument("pool '" + spec.pool() + "' has no board of type '" + r.board_type() +
                           "'");
  }
  bool any_type_can = false;
  std::string boards_said;
  for (const auto& [type, b] : healthiest) {
    if (b->health > 0 && BoardCanEverHold(*b, r)) any_type_can = true;
    boards_said += (boards_said.empty() ? "" : "; ") + type + " (" + b->node + "/board" +
                   std::to_string(b->board) + "): largest live rectangle " +
                   std::to_string(b->largest_live.w) + "x" + std::to_string(b->largest_live.h) +
                   ", " + std::to_string(b->ksps_total) + " ksps, " +
                   std::to_string(b->streams_total) + " streams";
  }
  if (!any_type_can || replicas_possible == 0) {
    return InvalidArgument("no board in pool '" + spec.pool() +
                           "' can ever hold this task: it asks for " + request.ToString() + ", " +
                           std::to_string(r.ksps()) + " ksps, " + std::to_string(r.streams()) +
                           " streams; the healthiest board of each type has: " + boards_said);
  }
  if (replicas_possible < spec.min_replicas()) {
    return InvalidArgument("pool '" + spec.pool() + "' can hold at most " +
                           std::to_string(replicas_possible) +
                           " replicas of this task at once, but replicas.min is " +
                           std::to_string(spec.min_replicas()));
  }
  return Status::Ok();
}

}  // namespace

Result<v1::JobSpec> AdmitJob(v1::JobSpec spec, const std::string& user,
                             const AdmissionLimits& limits, const v1::SchedulingConfig& scheduling,
                             const std::vector<BoardClass>& boards) {
  SNN_RETURN_IF_ERROR(FillDefaults(spec, user, limits));
  SNN_RETURN_IF_ERROR(ValidateJobSpec(spec));
  SNN_RETURN_IF_ERROR(CheckAgainstPolicy(spec, limits, scheduling));
  spec.set_user(user);
  SNN_RETURN_IF_ERROR(CheckCanEverRun(spec, boards));
  return spec;
}

}  // namespace snn
