#include "master/experiments/experiment_book.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>

#include "common/model/model.h"
#include "common/model/model_addresses.h"
#include "common/rpc/service_refusals.h"

namespace snn {
namespace {

std::string Who(const std::string& tenant, const std::string& user) { return tenant + "/" + user; }

std::string ServiceName(const v1::JobRecord& job) {
  return "service " + std::to_string(job.tenant_job_id()) + " (tenant " + job.tenant() + ")";
}

}  // namespace

std::string ExperimentKey(uint64_t service, uint64_t id) {
  return kExperimentKeyPrefix + Hex16(service) + "/" + Hex16(id);
}

Status ExperimentBook::Admits(const v1::JobRecord& service, const std::string& tenant) {
  if (service.tenant() == tenant) return Status::Ok();
  for (const auto& t : service.spec().service().tenants()) {
    if (t == tenant) return Status::Ok();
  }
  return PermissionDenied(
      ServiceName(service) + " takes experiments from tenant " + service.tenant() +
      (service.spec().service().tenants().empty() ? std::string()
                                                  : " and the tenants its service.tenants lists") +
      ", not from tenant " + tenant);
}

int64_t ExperimentBook::CostUs(const v1::ExperimentSpec& spec) {
  const double dt = spec.model().has_timestep_ms() ? spec.model().timestep_ms() : 1.0;
  return std::max<int64_t>(1, std::llround(spec.steps() * dt * 1000.0));
}

Status ExperimentBook::Check(const v1::ExperimentSpec& spec) {
  if (spec.model().populations_size() == 0) return InvalidArgument("it has no model");
  if (spec.steps() == 0) return InvalidArgument("steps must be at least 1");
  const double dt = spec.model().timestep_ms();
  if (spec.steps() * dt > ExperimentLimits::kMaxBoardMs) {
    return InvalidArgument("it runs " + std::to_string(spec.steps()) + " steps of " +
                           std::to_string(dt) + " ms: more than the " +
                           std::to_string(ExperimentLimits::kMaxBoardMs / 1000) +
                           " s of board time one experiment may take");
  }
  if (spec.ByteSizeLong() > ExperimentLimits::kMaxSpecBytes) {
    return InvalidArgument("its model and inputs take " + std::to_string(spec.ByteSizeLong()) +
                           " bytes; at most " + std::to_string(ExperimentLimits::kMaxSpecBytes) +
                           " are accepted");
  }
  const ModelAddresses addresses(spec.model(), 1);
  for (int i = 0; i < spec.inputs_size(); ++i) {
    const v1::NamedSpike& in = spec.inputs(i);
    if (Status known = addresses.Check(in.population(), in.neuron()); !known.ok()) {
      return InvalidArgument("input " + std::to_string(i) + ": " + known.message());
    }
    if (in.step() >= spec.steps()) {
      return InvalidArgument("input " + std::to_string(i) + " fires at step " +
                             std::to_string(in.step()) + ", but the experiment runs steps 0 to " +
                             std::to_string(spec.steps() - 1));
    }
  }
  return Status::Ok();
}

Result<v1::ExperimentSubmitResponse> ExperimentBook::Submit(const v1::JobRecord& service,
                                                            const std::string& tenant,
                                                            const std::string& user,
                                                            std::vector<v1::ExperimentSpec> specs) {
  if (service.spec().kind() != v1::SERVICE) {
    return FailedPrecondition("job " + std::to_string(service.tenant_job_id()) +
                              " is not an experiment service (kind: service)");
  }
  if (service.state() == v1::PENDING) {
    return FailedPrecondition(ServiceName(service) + " " + kServiceHoldsNoBoard +
                              " (it is pending): send experiments once it runs (snnctl show " +
                              std::to_string(service.tenant_job_id()) +
                              "; snnctl experiment submit --wait waits for it)");
  }
  if (service.state() != v1::RUNNING) {
    return FailedPrecondition(ServiceName(service) + " has ended (" +
                              v1::JobState_Name(service.state()) + ": " + service.reason() +
                              "): it takes no more experiments");
  }
  SNN_RETURN_IF_ERROR(Admits(service, tenant));
  if (specs.empty() || specs.size() > size_t(ExperimentLimits::kMaxPerRequest)) {
    return InvalidArgument("send 1 to " + std::to_string(ExperimentLimits::kMaxPerRequest) +
                           " experiments at a time, not " + std::to_string(specs.size()));
  }
  Service& s = services_[service.id()];
  const std::string who = Who(tenant, user);
  const size_t waiting = s.unfinished[who];
  if (waiting + specs.size() > ExperimentLimits::kMaxWaitingPerUser) {
    return Status(Code::kResourceExhausted,
                  "you have " + std::to_string(waiting) + " experiments waiting in " +
                      ServiceName(service) + "; at most " +
                      std::to_string(ExperimentLimits::kMaxWaitingPerUser) +
                      " may wait: fetch results first");
  }
  size_t bytes = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    Status valid = ValidateModel(*specs[i].mutable_model());
    if (valid.ok()) valid = Check(specs[i]);
    if (!valid.ok()) {
      return InvalidArgument("experiment " + std::to_string(i) + ": " + valid.message());
    }
    bytes += specs[i].ByteSizeLong();
  }
  const auto held = user_waiting_bytes_.find(user);
  const size_t user_bytes = held == user_waiting_bytes_.end() ? 0 : held->second;
  if (user_bytes + bytes > bounds_.user_bytes) {
    return Status(Code::kResourceExhausted,
                  "your experiments waiting in every service come to " +
                      std::to_string(user_bytes >> 20) + " MiB; with these, over the " +
                      std::to_string(bounds_.user_bytes >> 20) +
                      " MiB one user may have waiting: try again when some have run");
  }
  const bool owner = user == service.spec().user();
  if (!owner && s.waiting_bytes + bytes > bounds_.service_bytes) {
    return Status(Code::kResourceExhausted, ServiceName(service) + " holds " +
                                                std::to_string(s.waiting_bytes >> 20) +
                                                " MiB of waiting experiments; at most " +
                                                std::to_string(bounds_.service_bytes >> 20) +
                                                " MiB may wait: try again when some have run");
  }
  if (s.sums.count(who) == 0) s.sums[who].number = static_cast<uint32_t>(s.sums.size() - 1);
  v1::ExperimentSubmitResponse response;
  response.set_first_id(s.next_id);
  response.set_count(static_cast<uint32_t>(specs.size()));
  for (auto& spec : specs) {
    v1::ExperimentRecord r;
    r.set_service(service.id());
    r.set_service_tenant_job_id(service.tenant_job_id());
    r.set_id(s.next_id++);
    r.set_tenant(tenant);
    r.set_user(user);
    *r.mutable_spec() = std::move(spec);
    r.set_state(v1::EXPERIMENT_QUEUED);
    r.set_submit_ms(clock_.NowMs());
    journal_.Put(ExperimentKey(r.service(), r.id()), r.SerializeAsString());
    s.waiting_bytes += r.spec().ByteSizeLong();
    CountWaiting(user, r.spec().ByteSizeLong(), true);
    s.ids[who].push_back(r.id());
    ++s.unfinished[who];
    const uint64_t id = r.id();
    s.live.emplace(id, std::move(r));
    Enqueue(s, who, id, false);
  }
  return response;
}

void ExperimentBook::Enqueue(Service& s, const std::string& who, uint64_t id, bool front) {
  UserQueue& q = s.queues[who];
  if (q.waiting.empty() && std::find(s.ring.begin(), s.ring.end(), who) == s.ring.end()) {
    s.ring.push_back(who);
  }
  if (front) {
    q.waiting.push_front(id);
  } else {
    q.waiting.push_back(id);
  }
}

Result<v1::ExperimentListResponse> ExperimentBook::List(const v1::JobRecord& service,
                                                        const std::string& tenant,
                                                        const std::string& user,
                                                        const v1::ExperimentListRequest& request) {
  v1::ExperimentListResponse response;
  auto it = services_.find(service.id());
  if (it == services_.end()) return response;
  Service& s = it->second;
  const auto ids = s.ids.find(Who(tenant, user));
  if (ids == s.ids.end()) return response;
  const uint32_t limit = request.limit() == 0 ? 1000 : std::min<uint32_t>(request.limit(), 10000);
  response.set_queued(static_cast<uint32_t>(s.unfinished[Who(tenant, user)]));
  auto from = std::upper_bound(ids->second.begin(), ids->second.end(), request.after_id());
  for (; from != ids->second.end() && uint32_t(response.experiments_size()) < limit; ++from) {
    v1::ExperimentRecord record;
    if (auto live = s.live.find(*from); live != s.live.end()) {
      if (request.finished_only()) continue;
      record = live->second;
    } else if (s.settling.count(*from) > 0) {
      // Its end is not durable yet: to the caller it still runs.
      if (request.finished_only()) continue;
      record.set_service(service.id());
      record.set_service_tenant_job_id(service.tenant_job_id());
      record.set_id(*from);
      record.set_tenant(tenant);
      record.set_user(user);
      record.set_state(v1::EXPERIMENT_RUNNING);
    } else {
      auto stored = store_.Get(ExperimentKey(service.id(), *from));
      if (!stored.ok()) return stored.status();
      if (!stored->has_value() || !record.ParseFromString(**stored)) continue;
    }
    record.clear_spec();  // the sender has it
    if (!request.outputs()) record.clear_outputs();
    *response.add_experiments() = std::move(record);
  }
  return response;
}

v1::ExperimentBatch ExperimentBook::NextTurn(Service& s, int64_t period_us) {
  while (!s.ring.empty()) {
    const std::string who = s.ring.front();
    s.ring.pop_front();
    UserQueue& q = s.queues[who];
    if (q.waiting.empty()) {
      q.allowance_us = 0;
      continue;
    }
    q.allowance_us += period_us;
    v1::ExperimentBatch turn;
    size_t bytes = 0;
    while (!q.waiting.empty()) {
      v1::ExperimentRecord& r = s.live.at(q.waiting.front());
      const int64_t cost = CostUs(r.spec());
      const size_t size = r.spec().ByteSizeLong();
      if (cost > q.allowance_us) break;
      if (turn.runs_size() > 0 && bytes + size > ExperimentLimits::kMaxTurnBytes) break;
      v1::ExperimentRun* run = turn.add_runs();
      run->set_id(r.id());
      *run->mutable_spec() = r.spec();
      bytes += size;
      q.allowance_us -= cost;
      r.set_state(v1::EXPERIMENT_RUNNING);
      q.waiting.pop_front();
      turn.set_tenant(r.tenant());
      turn.set_user(r.user());
    }
    if (q.waiting.empty()) {
      q.allowance_us = 0;
    } else {
      s.ring.push_back(who);
    }
    if (turn.runs_size() > 0) return turn;
  }
  return v1::ExperimentBatch();
}

void ExperimentBook::Pump() {
  if (pumping_) {
    pump_again_ = true;
    return;
  }
  pumping_ = true;
  do {
    pump_again_ = false;
    for (auto& [id, s] : services_) {
      if (s.ended || s.ring.empty() || clock_.NowMs() < s.retry_at_ms) continue;
      const v1::JobRecord* job = jobs_.Find(id);
      if (job == nullptr || job->state() != v1::RUNNING) continue;
      const uint32_t period_ms = job->spec().service().period_ms() > 0
                                     ? job->spec().service().period_ms()
                                     : ExperimentLimits::kDefaultPeriodMs;
      for (const auto& task : job->tasks()) {
        // An agent not connected now gets its turns once it registers (the tick pumps again).
        if (task.state() != v1::TASK_RUNNING || !agents_.Reachable(task.node())) continue;
        // A turn that failed at once (its session dropped) sets retry_at_ms: no loop on it.
        while (s.turns_out[task.index()] < ExperimentLimits::kTurnsAhead && !s.ring.empty() &&
               clock_.NowMs() >= s.retry_at_ms) {
          v1::ExperimentBatch turn = NextTurn(s, int64_t{period_ms} * 1000);
          if (turn.runs_size() == 0) break;
          SendTurn(*job, task, std::move(turn));
        }
      }
    }
  } while (pump_again_);
  pumping_ = false;
}

void ExperimentBook::SendTurn(const v1::JobRecord& job, const v1::TaskRecord& task,
                              v1::ExperimentBatch turn) {
  turn.set_job_id(job.id());
  turn.set_index(task.index());
  turn.set_attempt(task.attempt());
  turn.set_board(task.board());
  *turn.mutable_rect() = task.mapping().rect();
  *turn.mutable_resources() = job.spec().task().resources();
  std::vector<uint64_t> ids;
  for (const auto& run : turn.runs()) ids.push_back(run.id());
  ++services_[job.id()].turns_out[task.index()];
  agents_.RunExperiments(task.node(), turn,
                         [this, service = job.id(), index = task.index(),
                          board = task.node() + "/board" + std::to_string(task.board()),
                          ids = std::move(ids)](Result<v1::ExperimentBatchResponse> result) {
                           TurnEnded(service, index, board, ids, std::move(result));
                         });
}

void ExperimentBook::TurnEnded(uint64_t service_id, uint32_t index, const std::string& board,
                               const std::vector<uint64_t>& ids,
                               Result<v1::ExperimentBatchResponse> result) {
  auto it = services_.find(service_id);
  if (it == services_.end()) return;
  Service& s = it->second;
  --s.turns_out[index];
  std::map<uint64_t, const v1::ExperimentResult*> by_id;
  if (result.ok()) {
    for (const auto& r : result->results()) by_id[r.id()] = &r;
  }
  v1::JobRecord* job = jobs_.Find(service_id);
  v1::TaskRecord* task = nullptr;
  if (job != nullptr) {
    for (auto& t : *job->mutable_tasks()) {
      if (t.index() == index) task = &t;
    }
  }
  std::vector<uint64_t> again;
  for (uint64_t id : ids) {
    auto live = s.live.find(id);
    if (live == s.live.end()) continue;
    const bool ran = result.ok() && by_id.count(id) > 0;
    if (!ran && (result.ok() || result.status().code() == Code::kUnavailable)) {
      // The agent's session dropped, or the turn's answer was full: it waits again, first.
      again.push_back(id);
      continue;
    }
    v1::ExperimentRecord record = std::move(live->second);  // Finish forgets it
    record.set_task(index);
    record.set_board(board);
    if (!result.ok()) {
      record.set_state(v1::EXPERIMENT_FAILED);
      record.set_error("its turn on " + board + " failed: " + result.status().message());
    } else {
      const v1::ExperimentResult& done = *by_id.at(id);
      record.set_state(done.error().empty() ? v1::EXPERIMENT_DONE : v1::EXPERIMENT_FAILED);
      record.set_error(done.error());
      *record.mutable_outputs() = done.outputs();
      record.set_output_count(static_cast<uint32_t>(done.outputs_size()));
      record.set_start_us(done.start_us());
      record.set_end_us(done.end_us());
      record.set_board_us(done.board_us());
      if (!s.ended) {
        UserSums& sum = s.sums[Who(record.tenant(), record.user())];
        sum.board_us += done.board_us();
        ++sum.experiments;
        if (sum.first_us == 0) sum.first_us = done.start_us();
        sum.last_us = std::max(sum.last_us, done.end_us());
        if (task != nullptr) {
          task->set_busy_us(task->busy_us() + done.board_us());
          task->set_experiments(task->experiments() + 1);
        }
      }
    }
    Finish(s, std::move(record));
  }
  if (!result.ok() && result.status().code() == Code::kUnavailable) {
    // Whether it ran is not known; it runs again (recorded once), after a pause: a node that
    // is gone ends the service, one that comes back takes the turn again.
    s.retry_at_ms = clock_.NowMs() + ExperimentLimits::kRetryPauseMs;
  }
  for (auto id = again.rbegin(); id != again.rend(); ++id) {
    v1::ExperimentRecord& r = s.live.at(*id);
    r.set_state(v1::EXPERIMENT_QUEUED);
    Enqueue(s, Who(r.tenant(), r.user()), *id, true);
  }
  if (job != nullptr && task != nullptr && !IsTerminal(job->state())) journal_.PutJob(*job);
  journal_.Commit();
  Pump();
}

void ExperimentBook::CountWaiting(const std::string& user, size_t bytes, bool add) {
  size_t& held = user_waiting_bytes_[user];
  held = add ? held + bytes : held - std::min(held, bytes);
  if (held == 0) user_waiting_bytes_.erase(user);
}

void ExperimentBook::Finish(Service& s, v1::ExperimentRecord record) {
  s.waiting_bytes -= std::min(s.waiting_bytes, record.spec().ByteSizeLong());
  CountWaiting(record.user(), record.spec().ByteSizeLong(), false);
  record.mutable_spec()->clear_model();  // the sender has it; the record keeps what came back
  record.mutable_spec()->clear_inputs();
  journal_.Put(ExperimentKey(record.service(), record.id()), record.SerializeAsString());
  s.live.erase(record.id());
  --s.unfinished[Who(record.tenant(), record.user())];
  s.settling.insert(record.id());
  journal_.Defer([this, service = record.service(), id = record.id()] {
    if (auto it = services_.find(service); it != services_.end()) it->second.settling.erase(id);
  });
}

void ExperimentBook::ServiceEnded(const v1::JobRecord& job, const std::string& reason) {
  Service& s = services_[job.id()];
  if (s.ended) return;
  s.ended = true;
  std::vector<uint64_t> waiting;
  for (const auto& [id, r] : s.live) {
    if (r.state() == v1::EXPERIMENT_QUEUED) waiting.push_back(id);
  }
  for (uint64_t id : waiting) {
    v1::ExperimentRecord record = std::move(s.live.at(id));
    record.set_state(v1::EXPERIMENT_FAILED);
    record.set_error("the service ended before it ran: " + reason);
    Finish(s, std::move(record));
  }
  s.queues.clear();
  s.ring.clear();
  for (const auto& task : job.tasks()) {
    v1::KillRequest kill;
    kill.set_job_id(job.id());
    kill.set_index(task.index());
    kill.set_attempt(task.attempt());
    kill.set_reason(reason);
    agents_.Kill(task.node(), kill);  // the agent drops its turns and frees the cores
  }
  Bill(job, s);
}

void ExperimentBook::Bill(const v1::JobRecord& job, Service& s) {
  const v1::Resources& res = job.spec().task().resources();
  const std::string board_type = job.tasks().empty() ? "" : usage_.BoardTypeOf(job.tasks(0));
  for (const auto& [who, sum] : s.sums) {
    if (sum.experiments == 0) continue;
    v1::UsageRecord r;
    r.set_kind("experiment");
    r.set_job_id(job.id());
    r.set_tenant_job_id(job.tenant_job_id());
    r.set_task(1'000'000 + sum.number);
    r.set_attempt(job.attempt());
    const size_t slash = who.find('/');
    r.set_tenant(who.substr(0, slash));
    r.set_user(who.substr(slash + 1));
    r.set_pool(job.spec().pool());
    r.set_board_type(board_type);
    r.set_cores(res.cores());
    r.set_ksps(res.ksps());
    r.set_units(res.units());
    r.set_submit_ms(job.submit_ms());
    r.set_start_ms(sum.first_us / 1000);
    r.set_end_ms(std::max(sum.first_us, sum.last_us) / 1000);
    r.set_busy_us(sum.board_us);
    r.set_experiments(sum.experiments);
    r.set_state("DONE");
    usage_.Charge(r);
  }
}

Status ExperimentBook::Recover() {
  services_.clear();
  std::vector<v1::ExperimentRecord> orphans;
  Status scanned = store_.Scan(kExperimentKeyPrefix, "", [&](std::string_view, std::string_view v) {
    v1::ExperimentRecord r;
    if (!r.ParseFromArray(v.data(), static_cast<int>(v.size()))) return true;
    const v1::JobRecord* job = jobs_.Find(r.service());
    const bool finished = r.state() == v1::EXPERIMENT_DONE || r.state() == v1::EXPERIMENT_FAILED;
    if (job == nullptr || IsTerminal(job->state())) {
      if (!finished) orphans.push_back(std::move(r));
      return true;
    }
    Service& s = services_[r.service()];
    const std::string who = Who(r.tenant(), r.user());
    s.next_id = std::max(s.next_id, r.id() + 1);
    s.ids[who].push_back(r.id());
    if (s.sums.count(who) == 0) s.sums[who].number = static_cast<uint32_t>(s.sums.size() - 1);
    if (finished) {
      UserSums& sum = s.sums[who];
      if (r.board_us() > 0) {
        sum.board_us += r.board_us();
        ++sum.experiments;
        if (sum.first_us == 0) sum.first_us = r.start_us();
        sum.last_us = std::max(sum.last_us, r.end_us());
      }
      return true;
    }
    ++s.unfinished[who];
    r.set_state(v1::EXPERIMENT_QUEUED);  // it may have run: it runs again, recorded once
    s.waiting_bytes += r.spec().ByteSizeLong();
    CountWaiting(r.user(), r.spec().ByteSizeLong(), true);
    const uint64_t id = r.id();
    s.live.emplace(id, std::move(r));
    Enqueue(s, who, id, false);
    return true;
  });
  if (!scanned.ok()) return scanned;
  for (auto& r : orphans) {
    r.set_state(v1::EXPERIMENT_FAILED);
    r.set_error("its service ended while the master was down");
    r.mutable_spec()->clear_model();
    r.mutable_spec()->clear_inputs();
    journal_.Put(ExperimentKey(r.service(), r.id()), r.SerializeAsString());
  }
  if (!services_.empty() || !orphans.empty()) {
    LOG(INFO) << "experiments: " << services_.size() << " running services, " << orphans.size()
              << " experiments of ended services failed";
  }
  return Status::Ok();
}

}  // namespace snn
