// snnctl's command line: its usage text, and the options parsed into CliOptions (with the
// environment's defaults). Pure but for reading the environment.
#include <charconv>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/snnctl.h"
#include "cli/time_arg.h"
#include "common/utf8.h"

namespace snn {
namespace {

constexpr char kDefaultMaster[] = "127.0.0.1:7130";

}  // namespace

std::string CliUsage() {
  return R"(usage: snnctl [OPTIONS] COMMAND [ARGS]

Commands:
  submit FILE.yaml        submit a job; prints its job ID (--wait: and waits for its end)
  jobs                    list your tenant's jobs: pending, running, and those that ended
                          in the last day (--since, --until, --user, --state to choose)
  show JOBID              show one job: state, reason, tasks, core mapping, history
  cancel JOBID...         cancel pending or running jobs
  hold|release JOBID...   keep pending jobs from starting, or let them start again
  requeue JOBID...        stop a running job's tasks and let it wait to start again
  logs JOBID [--task N] [--stderr] [-f]
                          a task's stdout (or stderr), fetched from its node; -f follows it
                          until the job ends
  pool status             nodes and boards: cores, KSPS and streams used and free; job counts
  estimate MODEL          neurons, synapses, logical cores, a suggested shape and the spike
                          rate of a model (JSON, or NIR: .nir files from Norse, snnTorch, ...)
  policy show             the scheduling policy: queues, tenants, quotas, priority weights
  queue set NAME [--priority N] [--weight W] [--pool P [--max N] [--guaranteed N]] [--create]
  tenant set NAME [--weight W] [--pool P [--limit N] [--guaranteed N]] [--create]
                          change a queue or a tenant (admin); caps are cores per pool
  tenant credit TENANT AMOUNT [--note TEXT]
                          add to a tenant's credits (admin; negative takes back); a tenant
                          whose charges reach its credits has its new jobs held
  usage                   task attempts that ran since --since (default: a day ago), as
                          sacct: user, tenant, pool, board type, start, end, elapsed, cores,
                          core-seconds, KSPS-seconds, spikes, exit, state (--user, --pool,
                          --state, --until, --all-tenants to choose; -o json or --csv)
  report [--from T] [--to T] [--by-user]
                          as sreport: core-hours, KSPS-hours, jobs and mean wait per tenant
                          (and user) per pool, and each pool's utilization (default: this
                          month, UTC)
  invoice [TENANT] [--from T] [--to T]
                          a tenant's invoice for the task attempts that ended in the period
                          (default: this month, UTC) from the durable usage records, and
                          its account
  tenant add-user|remove-user TENANT USER...
                          change a tenant's members (its coordinators, admins)
  node token NODE [--ttl DURATION]
                          a one-time join token for a new node (admin; default 15m)
  node wait NODE... [--within DURATION]
                          wait until the nodes are registered and UP (default: 2m); exit 1,
                          saying which are not, if they are not by then
  node drain|resume NODE  stop (or restart) sending new work to a node; running jobs finish
  board drain|resume NODE/BOARD
                          the same for one board
  sim kill-core NODE/BOARD X,Y | sim fail-board NODE/BOARD |
  sim slow-board NODE/BOARD PERCENT | sim heal-board NODE/BOARD
                          fault injection on simulated boards

Options:
  --master HOST:PORT[,..] the master, or every master of an HA group (default: $SNN_MASTER,
                          else 127.0.0.1:7130)
  --tenant NAME           act for this tenant, one you belong to (default: $SNN_TENANT, else
                          your personal tenant, else the first tenant that lists you)
  --ca-file FILE          the cluster's CA certificate (default: $SNN_CA_FILE, else
                          /etc/snn/tls/ca.crt)
  --munge-socket PATH     munged's socket (default: $SNN_MUNGE_SOCKET, else munge's default)
  --auth munge|none       none: no TLS, no MUNGE, for a master run with --auth=none
                          (default: $SNN_AUTH, else munge)
  -o, --output FORMAT     table (default) or json; usage also csv
  --csv                   usage: comma-separated values with a header line (-o csv)
  --timeout SECONDS       give up on the master after this long (default: 5)
  --all-tenants           jobs, usage, report: every tenant's (readers and admins)
  --state S[,S...]        jobs: only these states (PENDING, RUNNING, COMPLETED, ...);
                          usage: one task state (EXITED, KILLED, TIMED_OUT, LOST, RUNNING)
  --priority              jobs: pending jobs in scheduling order with their priority factors
  --format COL[,COL...]   jobs: these columns, of id, globalid, tenant, name, user, state,
                          reason, pool, queue, priority, tasks, cores, ksps, submit, start,
                          end, time, wait, timelimit, attempt, requeues, nodes, exit
  --parsable              submit: print only the job ID
  --wait                  submit: wait for the job to end; exit 0 if it completed, its exit
                          code if it failed, 124 at its time limit, 125 if cancelled
  --page-size N           jobs: jobs fetched per request (default: 1000)
  --user NAME             jobs, usage: only NAME's
  --pool NAME             usage: only this pool's task attempts
  --since T               jobs: only jobs not ended before T (default: 1d, a day ago); T is
                          YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (local time), now, or a time
                          ago such as 30m, 2h, 7d; --since 1970-01-01 for every job
  --until T               jobs: only jobs submitted before T; usage: attempts started before T
  --from T, --to T        invoice, report: the period (T as for --since)
  --by-user               report: a row per user of each tenant
  --task N                logs: task N of the job (default: 0)
  --stderr                logs: the task's stderr instead of its stdout
  -f, --follow            logs: keep printing what the task writes until the job ends
  --note TEXT             tenant credit: why (kept with the credit)
  --reason TEXT           node/board drain: why (shown in pool status)
  --board-type T          estimate: use this board type's neurons per core (asks the master)
  --neurons-per-core N    estimate: use N, without asking the master
  --input-rate HZ         estimate, submit with a model: input firing rate (default: 10)
  -h, --help              this help
)";
}

Result<CliOptions> ParseCliArgs(const std::vector<std::string>& argv) {
  CliOptions o;
  for (size_t i = 0; i < argv.size(); ++i) {
    // Every argument may end up in a protobuf string, which must be UTF-8.
    if (size_t bad = 0; !ValidUtf8(argv[i], bad)) {
      return InvalidArgument("argument " + std::to_string(i + 1) + " is not UTF-8 text (byte " +
                             std::to_string(bad) + ")");
    }
  }
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
      has_value = true;
    }
    auto take = [&](const std::string& name) -> Result<std::string> {
      if (has_value) return value;
      if (i + 1 >= argv.size()) return InvalidArgument(name + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "--priority" && !o.args.empty() && o.args[0] == "jobs") {
      if (has_value) return InvalidArgument("jobs --priority takes no value");
      o.show_priority = true;
    } else if (arg == "--priority" || arg == "--weight" || arg == "--pool" || arg == "--max" ||
               arg == "--limit" || arg == "--guaranteed") {
      auto v = take(arg);
      if (!v.ok()) return v.status();
      o.settings[arg.substr(2)] = *v;
    } else if (arg == "--create") {
      if (has_value) return InvalidArgument("--create takes no value");
      o.create = true;
    } else if (arg == "--master" || arg == "--tenant" || arg == "-o" || arg == "--output" ||
               arg == "--timeout" || arg == "--state" || arg == "--board-type" ||
               arg == "--input-rate" || arg == "--neurons-per-core" || arg == "--reason" ||
               arg == "--page-size" || arg == "--ca-file" || arg == "--munge-socket" ||
               arg == "--auth" || arg == "--ttl" || arg == "--within" || arg == "--user" ||
               arg == "--since" || arg == "--until" || arg == "--from" || arg == "--to" ||
               arg == "--note" || arg == "--format") {
      auto v = take(arg);
      if (!v.ok()) return v.status();
      if (arg == "--master") o.master = *v;
      if (arg == "--ca-file") o.ca_file = *v;
      if (arg == "--munge-socket") o.munge_socket = *v;
      if (arg == "--ttl") o.ttl = *v;
      if (arg == "--within") o.within = *v;
      if (arg == "--user") o.job_user = *v;
      if (arg == "--since" || arg == "--until" || arg == "--from" || arg == "--to") {
        // checked here, worked out when run
        if (auto t = ParseTimeArg(*v, 0); !t.ok()) return t.status();
        (arg == "--since"   ? o.since
         : arg == "--until" ? o.until
         : arg == "--from"  ? o.from
                            : o.to) = *v;
      }
      if (arg == "--note") o.note = *v;
      if (arg == "--format") o.format = *v;
      if (arg == "--auth") {
        if (*v != "munge" && *v != "none") return InvalidArgument("--auth must be munge or none");
        o.auth = *v;
      }
      if (arg == "--tenant") o.tenant = *v;
      if (arg == "-o" || arg == "--output") {
        if (*v != "table" && *v != "json" && *v != "csv") {
          return InvalidArgument("output format '" + *v + "' is not table, json or csv");
        }
        o.output = *v;
      }
      if (arg == "--timeout") {
        int seconds = 0;
        auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), seconds);
        if (ec != std::errc() || p != v->data() + v->size() || seconds < 1 || seconds > 3600) {
          return InvalidArgument("--timeout must be 1 to 3600 seconds");
        }
        o.timeout_ms = seconds * 1000;
      }
      if (arg == "--board-type") o.board_type = *v;
      if (arg == "--reason") o.reason = *v;
      if (arg == "--page-size") {
        auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), o.page_size);
        if (ec != std::errc() || p != v->data() + v->size() || o.page_size < 1 ||
            o.page_size > 10000) {
          return InvalidArgument("--page-size must be 1 to 10000");
        }
      }
      if (arg == "--input-rate") {
        char* end = nullptr;
        o.input_rate_hz = std::strtod(v->c_str(), &end);
        if (end == v->c_str() || *end != '\0' || !(o.input_rate_hz >= 0) ||
            o.input_rate_hz > 100000) {
          return InvalidArgument("--input-rate must be a rate in Hz from 0 to 100000");
        }
      }
      if (arg == "--neurons-per-core") {
        auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), o.neurons_per_core);
        if (ec != std::errc() || p != v->data() + v->size() || o.neurons_per_core == 0) {
          return InvalidArgument("--neurons-per-core must be a positive number");
        }
      }
      if (arg == "--state") {
        size_t start = 0;
        while (start <= v->size()) {
          size_t end = v->find(',', start);
          if (end == std::string::npos) end = v->size();
          if (end > start) o.states.push_back(v->substr(start, end - start));
          start = end + 1;
        }
      }
    } else if (arg == "--task") {
      auto v = take(arg);
      if (!v.ok()) return v.status();
      auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), o.task);
      if (ec != std::errc() || p != v->data() + v->size()) {
        return InvalidArgument("--task must be a task's index (0, 1, ...)");
      }
    } else if (arg == "--all-tenants" || arg == "--parsable" || arg == "--wait" || arg == "--csv" ||
               arg == "--by-user" || arg == "--stderr" || arg == "-f" || arg == "--follow") {
      if (has_value) return InvalidArgument(arg + " takes no value");
      if (arg == "--stderr") o.stderr_stream = true;
      if (arg == "-f" || arg == "--follow") o.follow = true;
      if (arg == "--csv") o.output = "csv";
      if (arg == "--by-user") o.by_user = true;
      if (arg == "--all-tenants") o.all_tenants = true;
      if (arg == "--parsable") o.parsable = true;
      if (arg == "--wait") o.wait = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return InvalidArgument("unknown option '" + arg + "' (see snnctl --help)");
    } else {
      o.args.push_back(arg);
    }
  }
  if (o.master.empty()) {
    const char* env = std::getenv("SNN_MASTER");
    o.master = env && *env ? env : kDefaultMaster;
  }
  if (o.tenant.empty()) {
    const char* env = std::getenv("SNN_TENANT");
    if (env) o.tenant = env;
  }
  const auto from_env = [](std::string& field, const char* name, const char* fallback) {
    if (!field.empty()) return;
    const char* env = std::getenv(name);
    field = env && *env ? env : fallback;
  };
  from_env(o.ca_file, "SNN_CA_FILE", "/etc/snn/tls/ca.crt");
  from_env(o.munge_socket, "SNN_MUNGE_SOCKET", "");
  from_env(o.auth, "SNN_AUTH", "munge");
  if (o.auth != "munge" && o.auth != "none")
    return InvalidArgument("SNN_AUTH must be munge or none");
  return o;
}

}  // namespace snn
