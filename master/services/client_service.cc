#include "master/services/client_service.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <map>
#include <string>

#include "common/base/array_spec.h"
#include "common/base/job_validation.h"
#include "common/base/rect_allocator.h"
#include "common/identity/pki.h"
#include "master/auth/access_policy.h"
#include "master/jobs/gang_links.h"
#include "master/jobs/job_arrays.h"
#include "master/jobs/job_listing.h"

namespace snn {
namespace {

// Where a task's results came from, from the job's record and the board's description.
v1::Provenance ProvenanceOf(const v1::JobRecord& job, const v1::TaskRecord& task,
                            const NodeEntry* node) {
  v1::Provenance p;
  p.set_job_id(job.id());
  p.set_tenant(job.tenant());
  p.set_tenant_job_id(job.tenant_job_id());
  p.set_name(job.spec().name());
  p.set_user(job.spec().user());
  p.set_task(task.index());
  p.set_attempt(task.attempt());
  p.set_node(task.node());
  p.set_board(task.board());
  if (node != nullptr) {
    for (const auto& b : node->record.boards()) {
      if (b.index() == task.board()) p.set_board_type(b.type());
    }
  }
  p.set_model(job.spec().task().resources().model());
  if (job.spec().task().has_network()) {
    const v1::Model& net = job.spec().task().network();
    std::string bytes;
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    net.SerializeToCodedStream(&coded);
    coded.Trim();
    p.set_model_sha256(pki::Sha256Hex(bytes));
    p.set_model_dynamics(net.dynamics().empty() ? "lif" : net.dynamics());
    p.set_model_step_ms(net.timestep_ms());
  }
  p.set_state(job.state());
  p.set_task_state(task.state());
  p.set_exit_code(task.exit_code());
  p.set_submit_ms(job.submit_ms());
  p.set_start_ms(task.start_ms());
  p.set_end_ms(task.end_ms());
  return p;
}

// The files' names without their contents (listings; those who may not see them).
void HideFileContents(v1::JobRecord& job) {
  for (auto& [name, content] : *job.mutable_spec()->mutable_task()->mutable_files()) {
    content.clear();
  }
}

}  // namespace

ClientService::ClientService(JobTable& jobs, JobArchive& archive, NodeRegistry& nodes,
                             AgentChannel& agents, Journal& journal, JobLifecycle& lifecycle,
                             SchedulingDriver& scheduling, const Clock& clock)
    : jobs_(jobs),
      archive_(archive),
      nodes_(nodes),
      agents_(agents),
      journal_(journal),
      lifecycle_(lifecycle),
      scheduling_(scheduling),
      clock_(clock) {}

void ClientService::Register(MethodRouter& router) {
  using namespace std::placeholders;
  router.Add(rpc::kJobSubmit, std::bind(&ClientService::Submit, this, _1, _2, _3));
  router.Add(rpc::kJobCancel, std::bind(&ClientService::Cancel, this, _1, _2, _3));
  router.Add(rpc::kJobHold, std::bind(&ClientService::Hold, this, _1, _2, _3));
  router.Add(rpc::kJobKeepalive, std::bind(&ClientService::Renew, this, _1, _2, _3));
  router.Add(rpc::kJobRequeue, std::bind(&ClientService::Requeue, this, _1, _2, _3));
  router.Add(rpc::kJobLogs, std::bind(&ClientService::Logs, this, _1, _2, _3));
  router.Add(rpc::kJobResults, std::bind(&ClientService::Results, this, _1, _2, _3));
  router.Add(rpc::kJobShow, std::bind(&ClientService::Show, this, _1, _2, _3));
  router.Add(rpc::kJobList, std::bind(&ClientService::List, this, _1, _2, _3));
  router.Add(rpc::kPoolStatus, std::bind(&ClientService::PoolStatus, this, _1, _2, _3));
}

void ClientService::Submit(const CallContext& ctx, v1::SubmitRequest req,
                           Responder<v1::SubmitResponse> r) {
  v1::JobSpec spec = std::move(*req.mutable_spec());
  const std::string& asked = ctx.credential.tenant();
  if (!asked.empty() && !spec.tenant().empty() && spec.tenant() != asked) {
    return r.Fail(InvalidArgument("the job file names tenant '" + spec.tenant() +
                                  "' but you act for tenant '" + asked +
                                  "' (set --tenant or SNN_TENANT)"));
  }
  auto tenant =
      ActingTenant(scheduling_.scheduling(), ctx.identity, asked.empty() ? spec.tenant() : asked);
  if (!tenant.ok()) return r.Fail(ctx.Refuse(tenant.status()));
  spec.set_tenant(*tenant);
  spec.set_uid(ctx.identity.uid);  // whoever the job file says, the job is the caller's
  spec.set_gid(ctx.identity.gid);
  auto job = lifecycle_.Submit(std::move(spec), ctx.identity.user);
  if (!job.ok()) return r.Fail(job.status());
  v1::SubmitResponse resp;
  resp.set_job_id((*job)->id());
  resp.set_tenant_job_id((*job)->tenant_job_id());
  resp.set_tenant((*job)->tenant());
  journal_.Commit([r, resp] { r.Ok(resp); });
}

Result<v1::JobRecord*> ClientService::Lookup(const CallContext& ctx, const v1::JobRef& ref,
                                             std::optional<v1::JobRecord>& archived) {
  const v1::SchedulingConfig& policy = scheduling_.scheduling();
  // Reading needs membership or the reader role, not the right to act for the tenant.
  std::string tenant = ref.tenant().empty() ? ctx.credential.tenant() : ref.tenant();
  if (tenant.empty()) {
    auto acting = ActingTenant(policy, ctx.identity, "");
    if (!acting.ok()) return ctx.Refuse(acting.status());
    tenant = *acting;
  }
  if (Status s = MayRead(policy, ctx.identity, tenant); !s.ok()) return ctx.Refuse(s);
  v1::JobRecord* job = jobs_.FindByTenant(tenant, ref.tenant_job_id());
  if (job == nullptr) {
    auto stored = archive_.FindByTenant(tenant, ref.tenant_job_id());
    if (!stored.ok()) return stored.status();
    archived = std::move(*stored);
    if (archived) job = &*archived;
  }
  if (job == nullptr) {
    return NotFound("job " + std::to_string(ref.tenant_job_id()) + " not found for tenant '" +
                    tenant + "'");
  }
  if (ref.array_indices_size() == 0) return job;
  // ARRAY_INDEX: the element, once it has started (a job of its own).
  const v1::ArrayRange& r = ref.array_indices(0);
  if (r.step() < 1 || r.last() < r.first()) {
    return InvalidArgument("array indices are not a range (first <= last, step >= 1)");
  }
  if (!job->spec().has_array() || ref.array_indices_size() != 1 || r.first() != r.last()) {
    return InvalidArgument(job->spec().has_array()
                               ? "name one element (" + std::to_string(ref.tenant_job_id()) +
                                     "_5), or the array (" + std::to_string(ref.tenant_job_id()) +
                                     ")"
                               : "job " + std::to_string(ref.tenant_job_id()) + " is not an array");
  }
  // Its own ID, kept for it since the array was submitted.
  const uint64_t own = ElementTenantJobId(*job, r.first());
  if (own == 0) {
    return NotFound("array " + std::to_string(ref.tenant_job_id()) + " has no element " +
                    std::to_string(r.first()) +
                    " (its indices: " + FormatArrayRanges(job->spec().array().ranges()) + ")");
  }
  if (v1::JobRecord* element = jobs_.FindByTenant(tenant, own)) return element;
  auto stored = archive_.FindByTenant(tenant, own);
  if (!stored.ok()) return stored.status();
  if (*stored && (*stored)->array_parent() == job->id()) {
    archived = std::move(*stored);
    return &*archived;
  }
  return NotFound(
      "element " + std::to_string(r.first()) + " of array " + std::to_string(ref.tenant_job_id()) +
      (Contains(job->array_left(), r.first()) || Contains(job->array_held(), r.first())
           ? " has not started (snnctl show " + std::to_string(ref.tenant_job_id()) + ")"
           : " is not running: an element that ended is listed by its own job ID "
             "(snnctl jobs)"));
}

// An array's elements named by `ref` (cancel, hold, release 7_[3-5]): the array, and the
// ranges; null ranges for a whole job.
Result<v1::JobRecord*> ClientService::LookupArray(const CallContext& ctx, v1::JobRef ref,
                                                  std::optional<v1::JobRecord>& archived,
                                                  ArrayRanges& indices) {
  indices.Swap(ref.mutable_array_indices());
  ref.clear_array_indices();
  // What a client other than snnctl may send: bounded, and ranges that make sense.
  if (indices.size() > static_cast<int>(ArrayLimits::kMaxRanges)) {
    return InvalidArgument("at most " + std::to_string(ArrayLimits::kMaxRanges) +
                           " ranges of array indices at once");
  }
  for (const auto& r : indices) {
    if (r.step() < 1 || r.last() < r.first()) {
      return InvalidArgument("array indices " + std::to_string(r.first()) + "-" +
                             std::to_string(r.last()) + ":" + std::to_string(r.step()) +
                             " are not a range (first <= last, step >= 1)");
    }
  }
  auto job = Lookup(ctx, ref, archived);
  if (!job.ok() || indices.empty()) return job;
  if (!(*job)->spec().has_array()) {
    return InvalidArgument("job " + std::to_string(ref.tenant_job_id()) + " is not an array");
  }
  if (archived) {
    return FailedPrecondition("array " + std::to_string(ref.tenant_job_id()) + " has ended (" +
                              v1::JobState_Name((*job)->state()) + ")");
  }
  return job;
}

void ClientService::Cancel(const CallContext& ctx, v1::CancelRequest req,
                           Responder<v1::CancelResponse> r) {
  std::optional<v1::JobRecord> archived;  // ended: Cancel says so and changes nothing
  ArrayRanges indices;
  auto job = LookupArray(ctx, req.job(), archived, indices);
  if (!job.ok()) return r.Fail(job.status());
  if (Status s = MayManage(ctx, **job, "cancelling"); !s.ok()) return r.Fail(s);
  const std::string reason = "cancelled by " + ctx.identity.user;
  Status s = indices.empty() ? lifecycle_.Cancel(**job, reason)
                             : lifecycle_.CancelElements(**job, indices, reason);
  if (!s.ok()) return r.Fail(s);
  v1::CancelResponse resp;
  resp.set_state((*job)->state());
  journal_.Commit([r, resp] { r.Ok(resp); });
}

void ClientService::Renew(const CallContext& ctx, v1::KeepaliveRequest req,
                          Responder<v1::KeepaliveResponse> r) {
  std::optional<v1::JobRecord> archived;  // ended: Renew says so and changes nothing
  auto job = Lookup(ctx, req.job(), archived);
  if (!job.ok()) return r.Fail(job.status());
  if (Status s = MayManage(ctx, **job, "renewing"); !s.ok()) return r.Fail(s);
  auto expires = lifecycle_.Renew(**job, req.keepalive_s());
  if (!expires.ok()) return r.Fail(expires.status());
  v1::KeepaliveResponse resp;
  resp.set_state((*job)->state());
  resp.set_expires_ms(*expires);
  resp.set_keepalive_s((*job)->spec().keepalive_s());
  journal_.Commit([r, resp] { r.Ok(resp); });
}

void ClientService::Hold(const CallContext& ctx, v1::HoldRequest req,
                         Responder<v1::CancelResponse> r) {
  std::optional<v1::JobRecord> archived;
  ArrayRanges indices;
  auto job = LookupArray(ctx, req.job(), archived, indices);
  if (!job.ok()) return r.Fail(job.status());
  const v1::JobRecord& target = **job;
  if (Status s = MayManage(ctx, target, req.release() ? "releasing" : "holding"); !s.ok()) {
    return r.Fail(s);
  }
  if (archived) {
    return r.Fail(FailedPrecondition("job " + std::to_string(target.tenant_job_id()) +
                                     " has ended (" + v1::JobState_Name(target.state()) + ")"));
  }
  Status s = !indices.empty() ? lifecycle_.HoldElements(**job, indices, req.release())
             : req.release()  ? lifecycle_.Release(**job)
                              : lifecycle_.Hold(**job, ctx.identity.user);
  if (!s.ok()) return r.Fail(s);
  v1::CancelResponse resp;
  resp.set_state((*job)->state());
  journal_.Commit([r, resp] { r.Ok(resp); });
}

Status ClientService::MayManage(const CallContext& ctx, const v1::JobRecord& job,
                                const std::string& doing) const {
  if (MayManageJob(scheduling_.scheduling(), ctx.identity, job.tenant(), job.spec().uid(),
                   job.spec().user())) {
    return Status::Ok();
  }
  return ctx.Refuse(
      PermissionDenied(doing + " job " + std::to_string(job.tenant_job_id()) + " of " +
                       job.spec().user() + " needs to be its owner, a coordinator of tenant '" +
                       job.tenant() + "' or an admin; " + ctx.identity.Describe() + " is none"));
}

void ClientService::Requeue(const CallContext& ctx, v1::RequeueRequest req,
                            Responder<v1::CancelResponse> r) {
  std::optional<v1::JobRecord> archived;
  auto job = Lookup(ctx, req.job(), archived);
  if (!job.ok()) return r.Fail(job.status());
  if (Status s = MayManage(ctx, **job, "requeueing"); !s.ok()) return r.Fail(s);
  if (Status s = lifecycle_.Requeue(**job, ctx.identity.user); !s.ok()) return r.Fail(s);
  v1::CancelResponse resp;
  resp.set_state((*job)->state());
  journal_.Commit([r, resp] { r.Ok(resp); });
}

Result<ClientService::TaskFiles> ClientService::FindTaskFiles(const CallContext& ctx,
                                                              const v1::JobRef& ref,
                                                              uint32_t index) {
  std::optional<v1::JobRecord> archived;
  auto job = Lookup(ctx, ref, archived);
  if (!job.ok()) return job.status();
  const v1::JobRecord& target = **job;
  // Output may hold what the env held: the same people may read it.
  SNN_RETURN_IF_ERROR(MayManage(ctx, target, "reading the output of"));
  const std::string name = "job " + std::to_string(target.tenant_job_id());
  if (target.tasks_size() == 0) {
    return FailedPrecondition(name + " has not started yet: no output");
  }
  const v1::TaskRecord* task = nullptr;
  for (const auto& t : target.tasks()) {
    if (t.index() == index) task = &t;
  }
  if (task == nullptr) {
    return NotFound(name + " has no task " + std::to_string(index) + " (tasks 0 to " +
                    std::to_string(target.tasks_size() - 1) + ")");
  }
  const NodeEntry* node = nodes_.Find(task->node());
  if (node == nullptr || node->session == nullptr) {
    return Unavailable("node " + task->node() + " of " + name +
                       " is not connected: its output cannot be read now");
  }
  TaskFiles out{ProvenanceOf(target, *task, node), {}};
  out.ask.set_job_id(target.id());
  out.ask.set_tenant(target.tenant());
  out.ask.set_tenant_job_id(target.tenant_job_id());
  out.ask.set_index(task->index());
  out.ask.set_attempt(task->attempt());
  return out;
}

void ClientService::Logs(const CallContext& ctx, v1::JobLogsRequest req,
                         Responder<v1::JobLogsResponse> r) {
  auto found = FindTaskFiles(ctx, req.job(), req.task());
  if (!found.ok()) return r.Fail(found.status());
  v1::TaskOutputRequest& ask = found->ask;
  ask.set_stderr(req.stderr());
  ask.set_offset(req.offset());
  ask.set_max_bytes(req.max_bytes() == 0 ? 256 * 1024 : std::min(req.max_bytes(), 1u << 20));
  v1::JobLogsResponse resp;
  resp.set_offset(req.offset());
  resp.set_state(found->provenance.state());
  resp.set_attempt(found->provenance.attempt());
  resp.set_node(found->provenance.node());
  agents_.TaskOutput(found->provenance.node(), ask,
                     [r, resp](Result<v1::TaskOutputResponse> out) mutable {
                       if (!out.ok()) return r.Fail(out.status());
                       resp.set_data(std::move(*out->mutable_data()));
                       resp.set_size(out->size());
                       r.Ok(resp);
                     });
}

void ClientService::Results(const CallContext& ctx, v1::JobResultsRequest req,
                            Responder<v1::JobResultsResponse> r) {
  auto found = FindTaskFiles(ctx, req.job(), req.task());
  if (!found.ok()) return r.Fail(found.status());
  v1::TaskOutputRequest& ask = found->ask;
  if (req.file().empty()) {
    ask.set_list_results(true);
  } else {
    ask.set_result(req.file());
    ask.set_offset(req.offset());
    ask.set_max_bytes(req.max_bytes() == 0 ? 1u << 20 : std::min(req.max_bytes(), 1u << 20));
  }
  v1::JobResultsResponse resp;
  resp.set_offset(req.offset());
  *resp.mutable_provenance() = std::move(found->provenance);
  agents_.TaskOutput(resp.provenance().node(), ask,
                     [r, resp](Result<v1::TaskOutputResponse> out) mutable {
                       if (!out.ok()) return r.Fail(out.status());
                       resp.mutable_files()->Swap(out->mutable_results());
                       resp.set_data(std::move(*out->mutable_data()));
                       resp.set_size(out->size());
                       r.Ok(resp);
                     });
}

v1::JobRecord ClientService::ForDisplay(const v1::JobRecord& job, const Identity& viewer) const {
  v1::JobRecord copy = job;
  if (!MayManageJob(scheduling_.scheduling(), viewer, job.tenant(), job.spec().uid(),
                    job.spec().user())) {
    // Secrets travel in the env: only the owner, its coordinators and admins see it.
    copy.mutable_spec()->mutable_task()->clear_env();
    HideFileContents(copy);  // as the env: the inputs may be private
  }
  copy.set_reason(scheduling_.PendingReason(job));
  const PriorityFactors* f =
      job.state() == v1::PENDING ? jobs_.views().FactorsOf(job.id()) : nullptr;
  if (f != nullptr) {  // as the last pass worked them out
    v1::PriorityFactors* p = copy.mutable_priority();
    p->set_age(f->age);
    p->set_fairshare(f->fairshare);
    p->set_size(f->size);
    p->set_queue(f->queue);
    p->set_job(f->job);
    p->set_slowdown(f->slowdown);
    p->set_total(f->total);
    p->set_starving(f->starving);
  }
  return copy;
}

void ClientService::Show(const CallContext& ctx, v1::ShowJobRequest req,
                         Responder<v1::ShowJobResponse> r) {
  std::optional<v1::JobRecord> archived;
  auto job = Lookup(ctx, req.job(), archived);
  if (!job.ok()) return r.Fail(job.status());
  v1::ShowJobResponse resp;
  *resp.mutable_job() = ForDisplay(**job, ctx.identity);
  if ((*job)->state() == v1::RUNNING) {
    for (std::string& l : GangLinks(nodes_, **job)) resp.add_gang_links(std::move(l));
  }
  if ((*job)->state() != v1::PENDING) {
    journal_.Commit([r, resp = std::move(resp)] { r.Ok(resp); });
    return;
  }
  // A pending job with its forecast start (worked out away from the io thread).
  scheduling_.StartForecasts(
      [this, r, resp = std::move(resp)](std::shared_ptr<const SchedulingDriver::Forecasts> f) {
        v1::ShowJobResponse shown = resp;
        SchedulingDriver::ShowForecast(*f, *shown.mutable_job());
        journal_.Commit([r, shown = std::move(shown)] { r.Ok(shown); });
      });
}

void ClientService::List(const CallContext& ctx, v1::ListJobsRequest req,
                         Responder<v1::ListJobsResponse> r) {
  const v1::SchedulingConfig& policy = scheduling_.scheduling();
  std::string tenant;
  if (req.all_tenants()) {
    if (ctx.identity.role < Role::kReader) {
      return r.Fail(
          ctx.Refuse(PermissionDenied("listing every tenant's jobs needs the reader role; " +
                                      ctx.identity.Describe() + " has the user role")));
    }
  } else {
    tenant = req.tenant().empty() ? ctx.credential.tenant() : req.tenant();
    if (tenant.empty()) {
      auto acting = ActingTenant(policy, ctx.identity, "");
      if (!acting.ok()) return r.Fail(ctx.Refuse(acting.status()));
      tenant = *acting;
    }
    if (Status s = MayRead(policy, ctx.identity, tenant); !s.ok()) return r.Fail(ctx.Refuse(s));
  }
  JobFilter filter;
  filter.tenant = tenant;
  filter.user = req.user();
  for (int state : req.states()) filter.states.push_back(static_cast<v1::JobState>(state));
  filter.since_ms = req.since_ms();
  filter.until_ms = req.until_ms();
  // Pages keep every answer far below the frame limit however many jobs the cluster has seen,
  // and however large they are: a page ends after 1000 jobs (or the asked limit) or 1 MiB, and
  // looks at no more than 20,000 archived jobs.
  static constexpr size_t kMaxPageBytes = 1 << 20;
  static constexpr size_t kArchiveBudget = 20000;
  const uint32_t limit = req.limit() == 0 ? 1000 : std::min<uint32_t>(req.limit(), 10000);
  // With start: pending jobs with their forecast start (worked out away from the io thread),
  // the listing made once it is known.
  auto answer = [this, identity = ctx.identity, filter, after_id = req.after_id(), limit,
                 r](std::shared_ptr<const SchedulingDriver::Forecasts> forecasts) {
    size_t bytes = 0;
    auto resp = std::make_shared<v1::ListJobsResponse>();
    auto end = ListJobs(jobs_, archive_, filter, after_id, limit, kArchiveBudget,
                        [&](const v1::JobRecord& job) {
                          v1::JobRecord* shown = resp->add_jobs();
                          *shown = ForDisplay(job, identity);
                          shown->mutable_spec()->mutable_task()->clear_network();  // `show` has it
                          HideFileContents(*shown);
                          if (forecasts != nullptr) {
                            SchedulingDriver::ShowForecast(*forecasts, *shown);
                          }
                          bytes += shown->ByteSizeLong();
                          return bytes < kMaxPageBytes;
                        });
    if (!end.ok()) return r.Fail(end.status());
    resp->set_more(end->more);
    resp->set_next_after_id(end->next_after_id);
    journal_.Commit([r, resp] { r.Ok(*resp); });
  };
  if (!req.start()) return answer(nullptr);
  scheduling_.StartForecasts(std::move(answer));
}

void ClientService::PoolStatus(const CallContext& ctx, v1::PoolStatusRequest req,
                               Responder<v1::PoolStatusResponse> r) {
  auto resp = std::make_shared<v1::PoolStatusResponse>();
  resp->set_now_ms(clock_.NowMs());
  const double unit_ksps = scheduling_.UnitKsps();
  resp->set_unit_ksps(unit_ksps);
  resp->set_unit_board_type(scheduling_.admission().unit_board_type);
  for (const auto& [name, entry] : nodes_.nodes()) {
    v1::NodeStatus* ns = resp->add_nodes();
    ns->set_name(name);
    ns->mutable_pools()->CopyFrom(entry.record.pools());
    ns->set_state(NodeStateText(entry));
    ns->set_last_heartbeat_ms(entry.last_heartbeat_ms);
    for (const auto& info : entry.record.boards()) {
      v1::BoardStatus* bs = ns->add_boards();
      *bs->mutable_info() = info;
      if (auto m = entry.record.board_marks().find(info.index());
          m != entry.record.board_marks().end()) {  // the master's attributes, as jobs see them
        std::map<std::string, std::string> marks(m->second.values().begin(),
                                                 m->second.values().end());
        for (const auto& [k, v] : marks) {
          (*bs->mutable_info()->mutable_attributes())[k] = v;
          bs->add_marked(k);
        }
      }
      bs->set_state(BoardStateText(entry, info));
      bs->set_cores_total(LiveCores(info));
      bs->set_units(EffectiveKsps(info) / unit_ksps);
      if (info.index() < entry.usage.size()) {
        const BoardUsage& u = entry.usage[info.index()];
        bs->set_cores_used(u.cores);
        bs->set_ksps_used(u.ksps);
        bs->set_streams_used(u.streams);
        bs->set_tasks(u.tasks);
        if (u.grid) {
          const Rect largest = LargestEmptyRectangle(*u.grid);
          auto* lf = bs->mutable_largest_free();
          lf->set_x(largest.x);
          lf->set_y(largest.y);
          lf->set_width(largest.w);
          lf->set_height(largest.h);
        }
      }
    }
  }
  for (v1::JobState s :
       {v1::PENDING, v1::RUNNING, v1::COMPLETED, v1::FAILED, v1::CANCELLED, v1::TIMEOUT}) {
    v1::JobCount* c = resp->add_job_counts();
    c->set_state(s);
    c->set_count(jobs_.CountInState(s) + archive_.Count(s));
  }
  journal_.Commit([r, resp] { r.Ok(*resp); });
}

}  // namespace snn
