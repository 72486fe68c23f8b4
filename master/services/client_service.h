// The RPC methods snnctl calls: job.submit, job.cancel, job.hold, job.keepalive (a session's
// keepalive), job.requeue, job.show,
// job.logs (a task's output, fetched from its agent), job.results (the files a task left in its
// output directory, and their provenance), job.list, pool.status.
// Every answer is sent only once the state it reports (or changes) is durable.
// Access: a user acts for a tenant it belongs to; it sees that tenant's jobs, cancels its own
// (a coordinator: the tenant's; an admin: any); a job's env is shown only to those who may
// manage it. Readers, operators and admins see every tenant's jobs.
// Thread contract: only on the master's io thread.
#pragma once

#include <optional>

#include "common/base/array_spec.h"
#include "common/base/clock.h"
#include "common/rpc/rpc_router.h"
#include "master/jobs/job_lifecycle.h"
#include "master/jobs/scheduling_driver.h"

namespace snn {

class ClientService {
 public:
  ClientService(JobTable& jobs, JobArchive& archive, NodeRegistry& nodes, AgentChannel& agents,
                Journal& journal, JobLifecycle& lifecycle, SchedulingDriver& scheduling,
                const Clock& clock);

  void Register(MethodRouter& router);

 private:
  void Submit(const CallContext& ctx, v1::SubmitRequest req, Responder<v1::SubmitResponse> r);
  void Hold(const CallContext& ctx, v1::HoldRequest req, Responder<v1::CancelResponse> r);
  void Renew(const CallContext& ctx, v1::KeepaliveRequest req, Responder<v1::KeepaliveResponse> r);
  void Cancel(const CallContext& ctx, v1::CancelRequest req, Responder<v1::CancelResponse> r);
  void Requeue(const CallContext& ctx, v1::RequeueRequest req, Responder<v1::CancelResponse> r);
  void Logs(const CallContext& ctx, v1::JobLogsRequest req, Responder<v1::JobLogsResponse> r);
  void Results(const CallContext& ctx, v1::JobResultsRequest req,
               Responder<v1::JobResultsResponse> r);
  void Show(const CallContext& ctx, v1::ShowJobRequest req, Responder<v1::ShowJobResponse> r);
  void List(const CallContext& ctx, v1::ListJobsRequest req, Responder<v1::ListJobsResponse> r);
  void PoolStatus(const CallContext& ctx, v1::PoolStatusRequest req,
                  Responder<v1::PoolStatusResponse> r);

  // The job `ref` names for this caller, or why there is none (or why it may not see it). An
  // archived job is read into `archived`, and the answer points there.
  Result<v1::JobRecord*> Lookup(const CallContext& ctx, const v1::JobRef& ref,
                                std::optional<v1::JobRecord>& archived);
  Result<v1::JobRecord*> LookupArray(const CallContext& ctx, v1::JobRef ref,
                                     std::optional<v1::JobRecord>& archived, ArrayRanges& indices);
  // A task whose files (output, results) the caller may read, on a connected node: where they
  // came from (the job's and the task's state now), and the agent's request naming the task's
  // directory. Not the job's record: that may hold a network and files (`logs -f` asks twice a
  // second).
  struct TaskFiles {
    v1::Provenance provenance;
    v1::TaskOutputRequest ask;
  };
  Result<TaskFiles> FindTaskFiles(const CallContext& ctx, const v1::JobRef& ref, uint32_t index);
  v1::JobRecord ForDisplay(const v1::JobRecord& job, const Identity& viewer) const;
  // OK if the caller may manage `job` (its owner, a coordinator of its tenant, an admin); else
  // the refusal, saying what it was doing ("cancelling", "holding", ...).
  Status MayManage(const CallContext& ctx, const v1::JobRecord& job,
                   const std::string& doing) const;

  JobTable& jobs_;
  JobArchive& archive_;
  NodeRegistry& nodes_;
  AgentChannel& agents_;  // reads task output from the agents
  Journal& journal_;
  JobLifecycle& lifecycle_;
  SchedulingDriver& scheduling_;
  const Clock& clock_;
};

}  // namespace snn
