#include "cli/job_commands.h"

#include <algorithm>
#include <set>

#include "cli/accounting_commands.h"
#include "cli/billing_commands.h"
#include "cli/format.h"
#include "cli/host_network.h"
#include "cli/job_columns.h"
#include "cli/job_control_commands.h"
#include "cli/model_import.h"
#include "cli/policy_commands.h"
#include "cli/session.h"
#include "cli/time_arg.h"
#include "common/base/array_spec.h"
#include "common/base/clock.h"
#include "common/base/duration.h"
#include "common/base/job_validation.h"
#include "common/daemon/job_file.h"
#include "common/model/model.h"
#include "common/model/model_fit.h"
#include "common/rpc/rpc_client.h"
#include "proto/node.pb.h"
#include "proto/policy.pb.h"

namespace snn {
namespace {

Result<v1::JobState> ParseState(const std::string& text) {
  std::string upper;
  for (char c : text) upper += static_cast<char>(toupper(static_cast<unsigned char>(c)));
  v1::JobState state;
  if (!v1::JobState_Parse(upper, &state) || state == v1::JOB_STATE_UNSPECIFIED) {
    return InvalidArgument("unknown state '" + text +
                           "' (PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT)");
  }
  return state;
}

Result<uint32_t> NeuronsPerCore(const CliOptions& o, const std::string& board_type,
                                const std::string& pool) {
  auto status = Call(o, rpc::kPoolStatus, v1::PoolStatusRequest());
  if (!status.ok()) return status.status();
  return NeuronsPerCoreOf(*status, board_type, pool);
}

// Reads the job's model as the user running snnctl: the cores it needs on the boards it may
// use, and the network itself, which travels in the job.
Status ResolveModel(const CliOptions& o, v1::JobSpec& spec) {
  auto* r = spec.mutable_task()->mutable_resources();
  if (r->model().empty()) return Status::Ok();
  auto model = LoadModelOfJob(r->model(), o.step_ms > 0 ? o.step_ms : r->model_step_ms(),
                              o.setting("reset").empty() ? r->model_reset() : o.setting("reset"));
  if (!model.ok()) return model.status();
  auto npc = NeuronsPerCore(o, r->board_type(), spec.pool().empty() ? "default" : spec.pool());
  if (!npc.ok()) return npc.status();
  return FitModelToJob(std::move(model).value(), *npc, o.input_rate_hz, spec);
}

}  // namespace

int Submit(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2) return Fail(err, InvalidArgument("usage: snnctl submit FILE.yaml"));
  auto spec = LoadJobFile(o.args[1]);
  if (!spec.ok()) return Fail(err, spec.status());
  if (std::string array = o.setting("array"); !array.empty()) {  // as sbatch --array
    auto parsed = ParseArraySpec(array);
    if (!parsed.ok()) return Fail(err, parsed.status());
    *spec->mutable_array() = std::move(*parsed);
  }
  if (o.hold) spec->set_hold(true);  // as sbatch --hold
  if (Status s = ResolveModel(o, *spec); !s.ok()) return Fail(err, s);
  v1::SubmitRequest req;
  *req.mutable_spec() = std::move(spec).value();
  auto resp = Call(o, rpc::kJobSubmit, req);
  if (!resp.ok()) return Fail(err, resp.status());
  if (o.output == "json") {
    out << FormatJson(*resp) << "\n";
  } else if (o.parsable) {
    out << resp->tenant_job_id() << "\n";
  } else {
    out << "Submitted job " << resp->tenant_job_id() << " (tenant " << resp->tenant() << ")\n";
  }
  if (o.wait) {
    out.flush();
    return WaitForEnd(o, *resp, out, err);
  }
  return 0;
}

int Jobs(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 1) {
    return Fail(err, InvalidArgument("usage: snnctl jobs [--all-tenants] [--user U] [--state "
                                     "S[,S]] [--since T] [--until T] [--priority] [--start]"));
  }
  if (int(o.show_start) + int(o.show_priority) + int(!o.format.empty()) > 1) {
    return Fail(err, InvalidArgument("jobs: --start, --priority and --format are different "
                                     "views of the jobs; give one"));
  }
  v1::ListJobsRequest req;
  req.set_all_tenants(o.all_tenants);
  req.set_user(o.job_user);
  const int64_t now_ms = SystemClock().NowMs();
  auto since = ParseTimeArg(o.since, now_ms);
  if (!since.ok()) return Fail(err, since.status());
  req.set_since_ms(*since);
  if (!o.until.empty()) {
    auto until = ParseTimeArg(o.until, now_ms);
    if (!until.ok()) return Fail(err, until.status());
    req.set_until_ms(*until);
  }
  if (o.show_priority || o.show_start) req.add_states(v1::PENDING);
  req.set_start(o.show_start);
  for (const auto& s : o.states) {
    auto state = ParseState(s);
    if (!state.ok()) return Fail(err, state.status());
    req.add_states(*state);
  }
  req.set_limit(o.page_size);
  std::vector<const JobColumn*> columns;
  if (!o.format.empty()) {
    auto parsed = ParseJobColumns(o.format);
    if (!parsed.ok()) return Fail(err, parsed.status());
    columns = std::move(parsed).value();
  }
  Session session(o);
  if (Status s = session.Open(); !s.ok()) return Fail(err, s);
  v1::ListJobsResponse all;
  while (true) {  // page through, however many jobs there are
    auto page = session.client().Call(rpc::kJobList, req);
    if (!page.ok()) return Fail(err, page.status());
    for (auto& job : *page->mutable_jobs()) *all.add_jobs() = std::move(job);
    if (!page->more() || page->next_after_id() <= req.after_id()) break;
    req.set_after_id(page->next_after_id());
  }
  if (o.output == "json") {
    out << FormatJson(all) << "\n";
  } else if (o.show_start) {
    out << FormatStartTable(all, now_ms);
  } else if (o.show_priority) {
    out << FormatPriorityTable(all);
  } else if (!o.format.empty()) {
    out << FormatJobColumns(all, columns, now_ms);
  } else {
    out << FormatJobsTable(all, o.all_tenants, now_ms);
  }
  return 0;
}

int Show(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2) return Fail(err, InvalidArgument("usage: snnctl show JOBID"));
  auto ref = ParseJobRef(o.args[1]);
  if (!ref.ok()) return Fail(err, ref.status());
  v1::ShowJobRequest req;
  *req.mutable_job() = *ref;
  auto resp = Call(o, rpc::kJobShow, req);
  if (!resp.ok()) return Fail(err, resp.status());
  if (o.output == "json") {
    out << FormatJson(resp->job()) << "\n";
  } else {
    const std::vector<std::string> gang(resp->gang_links().begin(), resp->gang_links().end());
    out << FormatJobDetail(resp->job(), SystemClock().NowMs(), &gang);
  }
  return 0;
}

int Estimate(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2) {
    return Fail(err, InvalidArgument("usage: snnctl estimate MODEL.json|MODEL.nir [--board-type T] "
                                     "[--input-rate HZ] [--neurons-per-core N]"));
  }
  auto model = LoadModelOfJob(o.args[1], o.step_ms, o.setting("reset"));
  if (!model.ok()) return Fail(err, model.status());
  uint32_t npc = o.neurons_per_core;
  std::string where = std::to_string(npc) + " neurons per core";
  if (npc == 0) {
    // The cluster's boards say how many neurons a core holds. Without a cluster the rest is
    // still measured here: only the cores are left out, saying why.
    auto pool = Call(o, rpc::kPoolStatus, v1::PoolStatusRequest());
    if (!pool.ok()) {
      where = "no cluster reached (" + pool.status().message() +
              "): give --neurons-per-core N for the cores";
    } else {
      auto asked = NeuronsPerCoreOf(*pool, o.board_type, "");
      if (!asked.ok()) {
        return Fail(err, Status(asked.status().code(),
                                asked.status().message() + " (or give --neurons-per-core)"));
      }
      npc = *asked;
      where = (AnyBoardType(o.board_type) ? "the smallest board type, " : o.board_type + ", ") +
              std::to_string(npc) + " neurons per core";
    }
  }
  const ModelEstimate e = EstimateModel(*model, std::max(npc, 1u), o.input_rate_hz);
  // The rate is measured: the board's own engine runs the network on this host.
  auto measured = MeasureRate(*model, o.input_rate_hz, /*seed=*/1);
  if (!measured.ok()) return Fail(err, measured.status());
  char rate[64], spikes[64], fan_in[64], window[64];
  snprintf(rate, sizeof rate, "%.1f", measured->spikes_per_s / 1000.0);
  snprintf(spikes, sizeof spikes, "%.0f", measured->spikes_per_s);
  snprintf(fan_in, sizeof fan_in, "%.0f", e.max_fan_in);
  snprintf(window, sizeof window, "%.3g", measured->simulated_s);
  if (o.output == "json") {
    out << "{\"model\": \"" << model->name() << "\", \"neurons\": " << e.neurons
        << ", \"neurons_per_core\": " << npc
        << ", \"cores\": " << (npc > 0 ? std::to_string(e.cores) : "null") << ", \"shape\": "
        << (npc > 0
                ? "\"" + std::to_string(e.shape_width) + "x" + std::to_string(e.shape_height) + "\""
                : "null")
        << ", \"synapses\": " << static_cast<uint64_t>(e.synapses) << ", \"max_fan_in\": " << fan_in
        << ", \"input_rate_hz\": " << o.input_rate_hz << ", \"ksps\": " << rate
        << ", \"spikes_per_s\": " << spikes << ", \"measured_steps\": " << measured->steps
        << ", \"simulated_s\": " << window << "}\n";
    return 0;
  }
  out << "model:            " << (model->name().empty() ? o.args[1] : model->name()) << " ("
      << model->populations_size() << " populations, " << e.neurons << " neurons, "
      << model->projections_size() << " projections)\n";
  out << "synapses:         " << static_cast<uint64_t>(e.synapses) << " (fan-in up to " << fan_in
      << " a neuron)\n";
  if (npc > 0) {
    out << "logical cores:    " << e.cores << " (" << where << ")\n";
    out << "suggested shape:  " << e.shape_width << "x" << e.shape_height << "\n";
  } else {
    out << "logical cores:    unknown: " << where << "\n";
  }
  out << "spike rate:       " << rate << " ksps (" << spikes << " spikes/s) with inputs at "
      << o.input_rate_hz << " Hz\n";
  out << "measured:         by running the network on the board's engine for " << window
      << " s of simulated time (" << measured->steps << " steps of " << model->timestep_ms()
      << " ms; random inputs, seed 1"
      << (measured->work_bound ? "; cut short by the bound on work: a large network" : "") << ")\n";
  return 0;
}

}  // namespace snn
