// The RPC methods of experiment services: experiment.submit (a user sends experiments to a
// running service whose tenant admits theirs) and experiment.list (a user reads their own
// experiments and results, also after the service ended). Nobody reads another user's
// experiments: not the service's owner, not an admin.
// Every answer is sent only once what it acknowledges is durable.
// Thread contract: only on the master's io thread.
#pragma once

#include "common/rpc/rpc_router.h"
#include "master/experiments/experiment_book.h"
#include "master/jobs/job_archive.h"
#include "master/jobs/scheduling_driver.h"

namespace snn {

class ExperimentService {
 public:
  ExperimentService(JobTable& jobs, JobArchive& archive, Journal& journal,
                    SchedulingDriver& scheduling, ExperimentBook& book)
      : jobs_(jobs), archive_(archive), journal_(journal), scheduling_(scheduling), book_(book) {}

  void Register(MethodRouter& router);

 private:
  void Submit(const CallContext& ctx, v1::ExperimentSubmitRequest req,
              Responder<v1::ExperimentSubmitResponse> r);
  void List(const CallContext& ctx, v1::ExperimentListRequest req,
            Responder<v1::ExperimentListResponse> r);
  // The service job `tenant`/`id` names (archived ones too); one NotFound for a job that does
  // not exist and one the caller's tenant may not use.
  Result<v1::JobRecord> Find(const std::string& caller_tenant, const std::string& tenant,
                             uint64_t id);

  JobTable& jobs_;
  JobArchive& archive_;
  Journal& journal_;
  SchedulingDriver& scheduling_;
  ExperimentBook& book_;
};

}  // namespace snn
