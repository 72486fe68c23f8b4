#include "cli/snnctl.h"

#include <algorithm>
#include <set>

#include "cli/accounting_commands.h"
#include "cli/billing_commands.h"
#include "cli/format.h"
#include "cli/job_columns.h"
#include "cli/job_control_commands.h"
#include "cli/job_file.h"
#include "cli/policy_commands.h"
#include "cli/session.h"
#include "cli/time_arg.h"
#include "common/clock.h"
#include "common/duration.h"
#include "common/job_validation.h"
#include "common/model.h"
#include "common/nir_model.h"
#include "common/rpc_client.h"
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

// Neurons per core of the boards a job could use: the given type's, or the smallest in the pool.
Result<uint32_t> NeuronsPerCore(const CliOptions& o, const std::string& board_type,
                                const std::string& pool) {
  auto status = Call(o, rpc::kPoolStatus, v1::PoolStatusRequest());
  if (!status.ok()) return status.status();
  uint32_t npc = 0;
  std::set<std::string> types;
  for (const auto& node : status->nodes()) {
    if (!pool.empty() &&
        std::find(node.pools().begin(), node.pools().end(), pool) == node.pools().end()) {
      continue;
    }
    for (const auto& b : node.boards()) {
      types.insert(b.info().type());
      if (!AnyBoardType(board_type) && b.info().type() != board_type) continue;
      if (npc == 0 || b.info().neurons_per_core() < npc) npc = b.info().neurons_per_core();
    }
  }
  if (npc == 0) {
    std::string known;
    for (const auto& t : types) known += (known.empty() ? "" : ", ") + t;
    return InvalidArgument("no board of type '" + board_type + "'" +
                           (pool.empty() ? "" : " in pool '" + pool + "'") +
                           (known.empty() ? "" : " (types: " + known + ")"));
  }
  return npc;
}

// Reads the job's model as the user running snnctl: the cores it needs on the boards it may
// use, and the network itself, which travels in the job.
Status ResolveModel(const CliOptions& o, v1::JobSpec& spec) {
  auto* r = spec.mutable_task()->mutable_resources();
  if (r->model().empty()) return Status::Ok();
  auto model = LoadAnyModelFile(r->model());
  if (!model.ok()) return model.status();
  auto npc = NeuronsPerCore(o, r->board_type(), spec.pool().empty() ? "default" : spec.pool());
  if (!npc.ok()) return npc.status();
  const ModelEstimate e = EstimateModel(*model, *npc, o.input_rate_hz);
  if (e.cores > JobLimits::kMaxCores) {
    return InvalidArgument("model " + r->model() + " needs " + std::to_string(e.cores) +
                           " cores, more than any board has");
  }
  r->set_cores(e.cores);
  // The agent builds the network from this copy: it never opens a path a user named.
  *spec.mutable_task()->mutable_network() = std::move(model).value();
  return ValidateJobSpec(spec);
}

int Submit(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2) return Fail(err, InvalidArgument("usage: snnctl submit FILE.yaml"));
  auto spec = LoadJobFile(o.args[1]);
  if (!spec.ok()) return Fail(err, spec.status());
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
                                     "S[,S]] [--since T] [--until T] [--priority]"));
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
  if (o.show_priority) req.add_states(v1::PENDING);
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
  auto id = ParseJobId(o.args[1]);
  if (!id.ok()) return Fail(err, id.status());
  v1::ShowJobRequest req;
  req.mutable_job()->set_tenant_job_id(*id);
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
  auto model = LoadAnyModelFile(o.args[1]);
  if (!model.ok()) return Fail(err, model.status());
  uint32_t npc = o.neurons_per_core;
  std::string where = std::to_string(npc) + " neurons per core";
  if (npc == 0) {
    auto asked = NeuronsPerCore(o, o.board_type, "");
    if (!asked.ok()) {
      return Fail(err, Status(asked.status().code(),
                              asked.status().message() + " (or give --neurons-per-core)"));
    }
    npc = *asked;
    where = (AnyBoardType(o.board_type) ? "the smallest board type, " : o.board_type + ", ") +
            std::to_string(npc) + " neurons per core";
  }
  const ModelEstimate e = EstimateModel(*model, npc, o.input_rate_hz);
  char rate[64], spikes[64], fan_in[64];
  snprintf(rate, sizeof rate, "%.1f", e.spikes_per_s / 1000.0);
  snprintf(spikes, sizeof spikes, "%.0f", e.spikes_per_s);
  snprintf(fan_in, sizeof fan_in, "%.0f", e.max_fan_in);
  if (o.output == "json") {
    out << "{\"model\": \"" << model->name() << "\", \"neurons\": " << e.neurons
        << ", \"neurons_per_core\": " << npc << ", \"cores\": " << e.cores << ", \"shape\": \""
        << e.shape_width << "x" << e.shape_height
        << "\", \"synapses\": " << static_cast<uint64_t>(e.synapses)
        << ", \"max_fan_in\": " << fan_in << ", \"input_rate_hz\": " << o.input_rate_hz
        << ", \"ksps\": " << rate << ", \"spikes_per_s\": " << spikes << "}\n";
    return 0;
  }
  out << "model:            " << (model->name().empty() ? o.args[1] : model->name()) << " ("
      << model->populations_size() << " populations, " << e.neurons << " neurons, "
      << model->projections_size() << " projections)\n";
  out << "synapses:         " << static_cast<uint64_t>(e.synapses) << " (fan-in up to " << fan_in
      << " a neuron)\n";
  out << "logical cores:    " << e.cores << " (" << where << ")\n";
  out << "suggested shape:  " << e.shape_width << "x" << e.shape_height << "\n";
  out << "spike rate:       " << rate << " ksps (" << spikes << " spikes/s) with inputs at "
      << o.input_rate_hz << " Hz\n";
  return 0;
}

int Sim(const CliOptions& o, std::ostream& out, std::ostream& err) {
  const Status usage = InvalidArgument(
      "usage: snnctl sim kill-core NODE/BOARD X,Y | sim fail-board NODE/BOARD | "
      "sim slow-board NODE/BOARD PERCENT | sim heal-board NODE/BOARD");
  if (o.args.size() < 3) return Fail(err, usage);
  v1::SimFaultRequest req;
  const std::string& what = o.args[1];
  if (what == "kill-core" && o.args.size() == 4) {
    req.set_kind(v1::SimFaultRequest::KILL_CORE);
  } else if (what == "fail-board" && o.args.size() == 3) {
    req.set_kind(v1::SimFaultRequest::FAIL_BOARD);
  } else if (what == "heal-board" && o.args.size() == 3) {
    req.set_kind(v1::SimFaultRequest::HEAL_BOARD);
  } else if (what == "slow-board" && o.args.size() == 4) {
    req.set_kind(v1::SimFaultRequest::SLOW_BOARD);
    unsigned percent = 0;
    char extra = 0;
    if (sscanf(o.args[3].c_str(), "%u%c", &percent, &extra) != 1) return Fail(err, usage);
    req.set_speed_percent(percent);
  } else {
    return Fail(err, usage);
  }
  const std::string& where = o.args[2];
  const size_t slash = where.rfind('/');
  unsigned board = 0, x = 0, y = 0;
  char comma = 0, extra = 0;
  if (slash == std::string::npos || slash == 0 ||
      sscanf(where.c_str() + slash + 1, "%u%c", &board, &extra) != 1) {
    return Fail(err, usage);
  }
  if (req.kind() == v1::SimFaultRequest::KILL_CORE &&
      (sscanf(o.args[3].c_str(), "%u%c%u%c", &x, &comma, &y, &extra) != 3 || comma != ',')) {
    return Fail(err, usage);
  }
  req.set_node(where.substr(0, slash));
  req.set_board(board);
  req.set_x(x);
  req.set_y(y);
  auto resp = Call(o, rpc::kSimFault, req);
  if (!resp.ok()) return Fail(err, resp.status());
  out << resp->outcome() << "\n";
  return 0;
}

// snnctl node drain|resume NODE, snnctl board drain|resume NODE/BOARD.
int Drain(const CliOptions& o, std::ostream& out, std::ostream& err) {
  const bool board = o.args[0] == "board";
  const Status usage =
      InvalidArgument(board ? "usage: snnctl board drain|resume NODE/BOARD [--reason TEXT]"
                            : "usage: snnctl node drain|resume NODE [--reason TEXT]");
  if (o.args.size() != 3 || (o.args[1] != "drain" && o.args[1] != "resume")) {
    return Fail(err, usage);
  }
  v1::DrainRequest req;
  req.set_drain(o.args[1] == "drain");
  req.set_reason(o.reason);
  req.set_board(-1);
  std::string target = o.args[2];
  if (board) {
    const size_t slash = target.rfind('/');
    unsigned index = 0;
    char extra = 0;
    if (slash == std::string::npos || slash == 0 ||
        sscanf(target.c_str() + slash + 1, "%u%c", &index, &extra) != 1) {
      return Fail(err, usage);
    }
    req.set_board(static_cast<int32_t>(index));
    target = target.substr(0, slash);
  }
  req.set_node(target);
  auto resp = Call(o, rpc::kDrain, req);
  if (!resp.ok()) return Fail(err, resp.status());
  out << (board ? "Board " : "Node ") << o.args[2]
      << (req.drain() ? " drained: no new work; running jobs finish" : " resumed") << "\n";
  return 0;
}

int NodeToken(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 3) {
    return Fail(err, InvalidArgument("usage: snnctl node token NODE [--ttl DURATION]"));
  }
  v1::NodeTokenRequest req;
  req.set_node(o.args[2]);
  if (!o.ttl.empty()) {
    auto ttl = ParseDurationSeconds(o.ttl);
    if (!ttl.ok()) return Fail(err, InvalidArgument("--ttl: " + ttl.status().message()));
    req.set_ttl_s(*ttl);
  }
  auto resp = Call(o, rpc::kNodeToken, req);
  if (!resp.ok()) return Fail(err, resp.status());
  // The token alone on standard output, so that `snnctl node token N > FILE` makes the file the
  // agent reads; the hint goes to standard error.
  out << resp->token() << "\n";
  if (!o.parsable) {
    err << "One enrolment of node " << o.args[2] << ", until "
        << FormatTimestamp(resp->expires_ms()) << ": snn-agent --node_name=" << o.args[2]
        << " --join_token_file=FILE (the file holding the token)\n";
  }
  return 0;
}

// Waits until every named node is registered and UP, asking the master every half second
// (an enrolling agent, a node just restarted); a master not reachable yet is asked again.
int NodeWait(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() < 3) {
    return Fail(err, InvalidArgument("usage: snnctl node wait NODE... [--within DURATION]"));
  }
  int64_t within_s = 120;
  if (!o.within.empty()) {
    auto parsed = ParseDurationSeconds(o.within);
    if (!parsed.ok()) return Fail(err, InvalidArgument("--within: " + parsed.status().message()));
    within_s = *parsed;
  }
  const std::vector<std::string> names(o.args.begin() + 2, o.args.end());
  const int64_t give_up_ms = CliClock().NowMs() + within_s * 1000;
  std::string last;
  while (true) {
    auto resp = Call(o, rpc::kPoolStatus, v1::PoolStatusRequest());
    if (!resp.ok() && resp.status().code() != Code::kUnavailable &&
        resp.status().code() != Code::kDeadlineExceeded) {
      return Fail(err, resp.status());
    }
    std::vector<std::string> not_up;
    for (const std::string& name : names) {
      std::string state = "not registered";
      if (resp.ok()) {
        for (const auto& node : resp->nodes()) {
          if (node.name() == name) state = node.state();
        }
      }
      if (state != "UP") not_up.push_back(name + " (" + state + ")");
    }
    if (!resp.ok()) last = resp.status().message();
    if (resp.ok() && not_up.empty()) {
      for (const std::string& name : names) out << "Node " << name << " is UP\n";
      return 0;
    }
    if (CliClock().NowMs() >= give_up_ms) {
      std::string which;
      for (const std::string& n : not_up) which += (which.empty() ? "" : ", ") + n;
      return Fail(err,
                  DeadlineExceeded("after " + std::to_string(within_s) + " s, not UP: " + which +
                                   (resp.ok() ? "; see the agent's log (journalctl -u snn-agent)"
                                              : "; the master: " + last)));
    }
    CliClock().SleepMs(500);
  }
}

int TenantMembers(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() < 4) {
    return Fail(err, InvalidArgument("usage: snnctl tenant add-user|remove-user TENANT USER..."));
  }
  v1::TenantMembersRequest req;
  req.set_tenant(o.args[2]);
  for (size_t i = 3; i < o.args.size(); ++i) {
    if (o.args[1] == "add-user") {
      req.add_add_users(o.args[i]);
    } else {
      req.add_remove_users(o.args[i]);
    }
  }
  auto resp = Call(o, rpc::kTenantMembers, req);
  if (!resp.ok()) return Fail(err, resp.status());
  for (const auto& t : resp->config().tenants()) {
    if (t.name() != o.args[2]) continue;
    std::string users;
    for (const auto& u : t.members().users()) users += (users.empty() ? "" : ", ") + u;
    out << "Tenant " << t.name() << " users: " << (users.empty() ? "(none)" : users) << "\n";
  }
  return 0;
}

int Pool(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2 || o.args[1] != "status") {
    return Fail(err, InvalidArgument("usage: snnctl pool status"));
  }
  auto resp = Call(o, rpc::kPoolStatus, v1::PoolStatusRequest());
  if (!resp.ok()) return Fail(err, resp.status());
  out << (o.output == "json" ? FormatJson(*resp) + "\n" : FormatPoolStatus(*resp));
  return 0;
}

}  // namespace

int RunCli(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.help) {
    out << CliUsage();
    return 0;
  }
  if (o.args.empty()) {
    err << CliUsage();
    return 2;
  }
  const std::string& command = o.args[0];
  if (command == "submit") return Submit(o, out, err);
  if (command == "jobs") return Jobs(o, out, err);
  if (command == "show") return Show(o, out, err);
  if (command == "cancel") return Cancel(o, out, err);
  if (command == "pool") return Pool(o, out, err);
  if (command == "estimate") return Estimate(o, out, err);
  if (command == "sim") return Sim(o, out, err);
  if (command == "node" && o.args.size() > 1 && o.args[1] == "token") return NodeToken(o, out, err);
  if (command == "node" && o.args.size() > 1 && o.args[1] == "wait") return NodeWait(o, out, err);
  if (command == "invoice") return Invoice(o, out, err);
  if (command == "usage") return Usage(o, out, err);
  if (command == "report") return Report(o, out, err);
  if (command == "hold" || command == "release") return HoldOrRelease(o, out, err);
  if (command == "requeue") return Requeue(o, out, err);
  if (command == "logs") return Logs(o, out, err);
  if (command == "tenant" && o.args.size() > 1 && o.args[1] == "credit") {
    return TenantCredit(o, out, err);
  }
  if (command == "tenant" && o.args.size() > 1 &&
      (o.args[1] == "add-user" || o.args[1] == "remove-user")) {
    return TenantMembers(o, out, err);
  }
  if (command == "node" || command == "board") return Drain(o, out, err);
  if (command == "policy") return PolicyShow(o, out, err);
  if (command == "queue" || command == "tenant") return PolicySet(o, out, err);
  err << "snnctl: unknown command '" << command << "' (see snnctl --help)\n";
  return 2;
}

}  // namespace snn
