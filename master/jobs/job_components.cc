#include "master/jobs/job_components.h"

namespace snn {

JobComponents::JobComponents(JobTable& jobs, JobArchive& archive, NodeRegistry& nodes,
                             AgentChannel& agents, Journal& journal, const Clock& clock,
                             JobOptions options, std::function<void()> request_schedule)
    : writer(jobs, archive, journal),
      dispatch(jobs, agents, journal),
      usage(nodes, journal),
      dependencies(jobs, archive, journal, writer, clock, request_schedule),
      scheduling(jobs, nodes, journal, writer, dispatch, usage, clock, options.admission,
                 request_schedule),
      lifecycle(jobs, nodes, journal, writer, dispatch, dependencies, usage, scheduling, clock,
                request_schedule) {
  scheduling.SetScheduling(options.scheduling);
  dispatch.set_on_answer([this](const std::string& node, const v1::TaskStatus& status) {
    lifecycle.ApplyTaskStatus(node, status);
  });
  usage.set_on_budgets_changed([this] { scheduling.BudgetsChanged(); });
}

void JobComponents::set_metrics(MasterMetrics* metrics) {
  scheduling.set_metrics(metrics);
  lifecycle.set_metrics(metrics);
}

void JobComponents::set_billing(BillingLedger* billing) {
  usage.set_billing(billing);
  // The policy's billing settings and the ledger's holds apply from now on.
  if (billing != nullptr) billing->SetConfig(scheduling.scheduling().billing());
  scheduling.BudgetsChanged();
  scheduling.LoadUsageWindow();
}

}  // namespace snn
