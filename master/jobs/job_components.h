// The master's job machinery, wired together: one object per reason to change, sharing the job
// table and the journal. Nothing but construction and wiring lives here; each part documents
// its own contract. Services and the server take the parts they use.
//   JobWriter         writes a changed job to the journal, or moves it to the archive
//   TaskDispatch      launches and kills on the agents, once durable (owns the AgentChannel)
//   UsageRecorder     usage records and charges of ended task attempts
//   DependencyIndex   after_ok dependencies
//   SchedulingDriver  the policy in force, admission, scheduling passes, wait reasons
//   JobLifecycle      submit, cancel, hold, release, requeue; task reports; node changes
// Thread contract: only on the master's io thread.
#pragma once

#include <functional>

#include "common/base/clock.h"
#include "master/jobs/admission.h"
#include "master/jobs/dependency_index.h"
#include "master/jobs/job_lifecycle.h"
#include "master/jobs/job_writer.h"
#include "master/jobs/scheduling_driver.h"
#include "master/jobs/task_dispatch.h"
#include "master/jobs/usage_recorder.h"
#include "master/sched/policy_config.h"

namespace snn {

struct JobOptions {
  AdmissionLimits admission;  // defaults and limits of submitted jobs
  v1::SchedulingConfig scheduling = DefaultSchedulingConfig();
};

struct JobComponents {
  // `agents` carries launches and kills to the nodes; `request_schedule` asks for a pass.
  JobComponents(JobTable& jobs, JobArchive& archive, NodeRegistry& nodes, AgentChannel& agents,
                Journal& journal, const Clock& clock, JobOptions options,
                std::function<void()> request_schedule);
  JobComponents(const JobComponents&) = delete;
  JobComponents& operator=(const JobComponents&) = delete;

  // Counts submits, starts, backfills and preemptions there (nullptr: nowhere).
  void set_metrics(MasterMetrics* metrics);
  // Usage records and budgets: each ended task attempt is recorded there, and the tenants it
  // holds have their pending jobs wait (nullptr: no billing).
  void set_billing(BillingLedger* billing);

  JobWriter writer;
  TaskDispatch dispatch;
  UsageRecorder usage;
  DependencyIndex dependencies;
  SchedulingDriver scheduling;
  JobLifecycle lifecycle;
};

}  // namespace snn
