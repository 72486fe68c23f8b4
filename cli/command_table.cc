#include "cli/command_table.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "cli/accounting_commands.h"
#include "cli/billing_commands.h"
#include "cli/experiment_commands.h"
#include "cli/job_commands.h"
#include "cli/job_control_commands.h"
#include "cli/node_commands.h"
#include "cli/policy_commands.h"
#include "cli/reservation_commands.h"
#include "cli/results_command.h"
#include "cli/session_commands.h"
#include "cli/shared_connection.h"
#include "cli/simulate_command.h"
#include "cli/token_commands.h"

namespace snn {
namespace {

constexpr size_t kSynopsisWidth = 24;  // the usage's first column
constexpr size_t kTextWidth = 70;      // and its second

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream in{std::string(text)};
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

}  // namespace

// `text`'s lines, the first after the synopsis (or on a line of its own when the synopsis is
// wide), the rest indented to the second column.
void AppendColumns(std::string& out, const std::string& synopsis, std::string_view text) {
  std::istringstream lines{std::string(text)};
  std::string line;
  bool first = true;
  const std::string indent(kSynopsisWidth + 2, ' ');
  while (std::getline(lines, line)) {
    if (first) {
      out += "  " + synopsis;
      if (synopsis.size() + 2 > kSynopsisWidth) {
        out += "\n" + indent;
      } else {
        out += std::string(kSynopsisWidth - synopsis.size(), ' ');
      }
      first = false;
    } else {
      out += indent;
    }
    out += line + "\n";
  }
}

const std::vector<CliCommand>& CliCommands() {
  static const std::vector<CliCommand> commands = {
      {"submit",
       "FILE.yaml",
       "submit a job; prints its job ID (--wait: and waits for its end)",
       {"--wait", "--parsable", "--input-rate", "--dt", "--reset", "--array", "--hold"},
       Submit},
      {"jobs",
       "",
       "list your tenant's jobs: pending, running, and those that ended\n"
       "in the last day (--since, --until, --user, --state to choose)",
       {"--all-tenants", "--state", "--priority", "--start", "--format", "--page-size", "--user",
        "--since", "--until"},
       Jobs},
      {"alloc",
       "",
       "ask for resources as a session, wait for them, print where they are\n"
       "and `export SNN_ALLOC=ID`; then stay, renewing it, until interrupted\n"
       "(Ctrl-C releases it). --detach: print and exit (renew it yourself\n"
       "with --renew ID). A session not renewed for its keepalive ends",
       {"--cores", "--shape", "--ksps", "--streams", "--board-type", "--pool", "--queue",
        "--replicas", "--time-limit", "--keepalive", "--name", "--detach", "--renew"},
       Alloc},
      {"run",
       "COMMAND [ARGS...]",
       "run a step in a session (--alloc ID, else $SNN_ALLOC) on its task\n"
       "--task N: one step at a time per task, in order; prints its output\n"
       "and exits with its exit code (124 at its time limit, 125 cancelled)",
       {"--alloc", "--task"},
       Run},
      {"experiment submit",
       "SERVICE MODEL RUN.json",
       "send experiments to an experiment service: MODEL (JSON or NIR) run\n"
       "for RUN.json's steps with its inputs; prints their IDs. --wait:\n"
       "wait and print their output spikes",
       {"--count", "--wait", "--service-tenant", "--dt", "--reset"},
       Experiment},
      {"experiment list",
       "SERVICE",
       "your experiments in a service: state, board time, outputs, errors",
       {"--service-tenant"},
       Experiment},
      {"experiment results",
       "SERVICE EXPERIMENT",
       "one of your experiments' output spikes (-o json: its whole record)",
       {"--service-tenant"},
       Experiment},
      {"show", "JOBID", "show one job: state, reason, tasks, core mapping, history", {}, Show},
      {"cancel", "JOBID...", "cancel pending or running jobs", {}, Cancel},
      {"hold", "JOBID...", "keep pending jobs from starting", {}, HoldOrRelease},
      {"release", "JOBID...", "let held jobs start again", {}, HoldOrRelease},
      {"requeue",
       "JOBID...",
       "stop a running job's tasks and let it wait to start again",
       {},
       Requeue},
      {"logs",
       "JOBID",
       "a task's stdout (or stderr), fetched from its node; -f follows it\n"
       "until the job ends",
       {"--task", "--stderr", "--follow"},
       Logs},
      {"results",
       "JOBID",
       "the files a task left in $SNN_OUTPUT_DIR, and where they came from;\n"
       "--out DIR fetches them all, with provenance.json",
       {"--task", "--out"},
       Results},
      {"pool status",
       "",
       "nodes and boards: cores, KSPS and streams used and free, each\n"
       "board's attributes (what constraints test) and which are marks; job\n"
       "counts",
       {},
       Pool},
      {"estimate",
       "MODEL",
       "neurons, synapses, logical cores, a suggested shape and the spike\n"
       "rate of a model (JSON, or NIR: .nir files from Norse, snnTorch, ...)",
       {"--board-type", "--neurons-per-core", "--input-rate", "--dt", "--reset"},
       Estimate},
      {"simulate",
       "MODEL",
       "runs a model on this host with the board's own engine: input spikes\n"
       "from --inputs (step,layer,neuron lines), output spikes and values to\n"
       "--out (step,layer,neuron,value)",
       {"--inputs", "--steps", "--out", "--dt", "--reset"},
       Simulate},
      {"policy show",
       "",
       "the scheduling policy: queues, tenants, quotas, priority weights",
       {},
       PolicyShow},
      {"queue set",
       "NAME",
       "change a queue, or with --create add one (admin); caps are cores\nper pool",
       {"--priority", "--weight", "--pool", "--max", "--guaranteed", "--create"},
       PolicySet},
      {"tenant set",
       "NAME",
       "change a tenant, or with --create add one (admin); caps are cores\nper pool; "
       "--parent and --nominal place it in the account tree",
       {"--weight", "--pool", "--limit", "--guaranteed", "--parent", "--nominal",
        "--borrowing-limit", "--lending-limit", "--create"},
       PolicySet},
      {"tenant credit",
       "TENANT AMOUNT",
       "add to a tenant's credits (admin; negative takes back); a tenant\n"
       "whose charges reach its credits has its new jobs held",
       {"--note"},
       TenantCredit},
      {"tenant add-user",
       "TENANT USER...",
       "add members to a tenant (its coordinators, admins)",
       {},
       TenantMembers},
      {"tenant remove-user",
       "TENANT USER...",
       "remove members from a tenant (its coordinators, admins)",
       {},
       TenantMembers},
      {"usage",
       "",
       "task attempts that ran since --since (default: a day ago), as\n"
       "sacct: user, tenant, pool, board type, start, end, elapsed, cores,\n"
       "core-seconds, KSPS-seconds, spikes, exit, state",
       {"--since", "--until", "--user", "--pool", "--state", "--job", "--all-tenants", "--csv"},
       Usage},
      {"report",
       "",
       "as sreport: core-hours, KSPS-hours, jobs and mean wait per tenant\n"
       "(and user) per pool, and each pool's utilization (default: this\n"
       "month, UTC)",
       {"--from", "--to", "--by-user", "--job", "--all-tenants"},
       Report},
      {"invoice",
       "[TENANT]",
       "a tenant's invoice for the task attempts that ended in the period\n"
       "(default: this month, UTC) from the durable usage records, and\n"
       "its account",
       {"--from", "--to"},
       Invoice},
      {"connection start",
       "",
       "keep connections to the master open for your later snnctl commands\n"
       "(this master and CA): each then skips TLS's start and handshake, as\n"
       "ssh's ControlMaster; it ends after --idle with no command",
       {"--idle"},
       ConnectionStart},
      {"connection status",
       "",
       "whether your shared connection is open, and its use",
       {},
       ConnectionStatus},
      {"connection stop",
       "",
       "end your shared connection; commands connect on their own",
       {},
       ConnectionStop},
      {"token create",
       "",
       "an access token for the HTTP API, acting as you (default 7d, at most\n"
       "90d); printed once, or written to --out's file (mode 0600). Needs\n"
       "MUNGE: a token cannot make tokens",
       {"--ttl", "--note", "--parsable", "--out"},
       TokenCreate},
      {"token list",
       "",
       "your access tokens (admins: everyone's, or --user's)",
       {"--user"},
       TokenList},
      {"token revoke", "ID", "end an access token at once (yours; admins: any)", {}, TokenRevoke},
      {"node token",
       "NODE",
       "a one-time join token for a new node (admin; default 15m); with\n"
       "--boards, also approves what it may declare (as node add): a node\n"
       "without an approved inventory gets no token",
       {"--ttl", "--parsable", "--boards", "--pools"},
       NodeToken},
      {"node add",
       "NODE --boards FILE",
       "approve what a node may declare: the boards of its boards file (at\n"
       "most that many, each at most that mesh, KSPS and streams, of that\n"
       "type) and, with --pools, the pools it may join (admin)",
       {"--boards", "--pools"},
       NodeAdd},
      {"node revoke",
       "NODE",
       "revoke every certificate of a node, and any copy of one: its session\n"
       "ends, and it must enrol again with a new join token (admin)",
       {},
       NodeRevoke},
      {"node wait",
       "NODE...",
       "wait until the nodes are registered and UP (default: 2m); exit 1,\n"
       "saying which are not, if they are not by then",
       {"--within"},
       NodeWait},
      {"node drain",
       "NODE",
       "send no new work to a node; running jobs finish",
       {"--reason"},
       Drain},
      {"node resume", "NODE", "send new work to a drained node again", {}, Drain},
      {"board drain",
       "NODE/BOARD",
       "send no new work to one board; running jobs finish",
       {"--reason"},
       Drain},
      {"board resume", "NODE/BOARD", "send new work to a drained board again", {}, Drain},
      {"board mark",
       "NODE/BOARD NAME=VALUE...",
       "set attributes of one board that constraints test (the master's\n"
       "marks, as a calibration job's sets_attribute; over the driver's of\n"
       "the same name); prints the board's marks (operators)",
       {},
       BoardMark},
      {"board unmark",
       "NODE/BOARD NAME...",
       "remove marks of one board; the driver's attributes stay (operators)",
       {},
       BoardMark},
      {"reservation create",
       "NAME",
       "set boards aside from --start for --duration: --boards NODE/BOARD,..\n"
       "or --count N of --pool; only --tenants' jobs naming it run there\n"
       "(reservation: NAME), no other job that would still run then starts\n"
       "on them; --flags maint,daily,flex,ignore_jobs (operators)",
       {"--start", "--duration", "--boards", "--count", "--pool", "--tenants", "--flags"},
       ReservationCreate},
      {"reservation list",
       "",
       "every advance reservation: when, how long, its boards, tenants, flags",
       {},
       ReservationList},
      {"reservation delete",
       "NAME",
       "remove a reservation; its boards are open again (operators)",
       {},
       ReservationDelete},
      {"sim kill-core", "NODE/BOARD X,Y", "a core of a simulated board dies (operators)", {}, Sim},
      {"sim fail-board", "NODE/BOARD", "a simulated board fails as a whole (operators)", {}, Sim},
      {"sim slow-board",
       "NODE/BOARD PERCENT",
       "a simulated board runs at PERCENT of its speed (operators)",
       {},
       Sim},
      {"sim heal-board", "NODE/BOARD", "a simulated board is whole again (operators)", {}, Sim},
  };
  return commands;
}

const std::vector<CliOptionSpec>& CliOptionSpecs() {
  static const std::vector<CliOptionSpec> options = {
      {"--master", "", "HOST:PORT[,..]",
       "the master, or every master of an HA group (default: $SNN_MASTER,\n"
       "else 127.0.0.1:7130)",
       true},
      {"--tenant", "", "NAME",
       "act for this tenant, one you belong to (default: $SNN_TENANT, else\n"
       "your personal tenant, else the first tenant that lists you)",
       true},
      {"--ca-file", "", "FILE",
       "the cluster's CA certificate (default: $SNN_CA_FILE, else\n/etc/snn/tls/ca.crt)", true},
      {"--munge-socket", "", "PATH",
       "munged's socket (default: $SNN_MUNGE_SOCKET, else munge's default)", true},
      {"--auth", "", "munge|none",
       "none: no TLS, no MUNGE, for a master run with --auth=none\n"
       "(default: $SNN_AUTH, else munge)",
       true},
      {"--output", "-o", "FORMAT", "table (default) or json; usage also csv", true},
      {"--timeout", "", "SECONDS", "give up on the master after this long (default: 5)", true},
      {"--help", "-h", "", "this help", true},
      {"--bash-completion", "", "", "print a bash completion script for snnctl", true},
      {"--version", "", "", "print snnctl's version and the commit it was built from", true},
      {"--csv", "", "", "usage: comma-separated values with a header line (-o csv)"},
      {"--all-tenants", "", "", "jobs, usage, report: every tenant's (readers and admins)"},
      {"--state", "", "S[,S...]",
       "jobs: only these states (PENDING, RUNNING, COMPLETED, ...);\n"
       "usage: one task state (EXITED, KILLED, TIMED_OUT, LOST, RUNNING)"},
      {"--priority", "", "",
       "jobs: pending jobs in scheduling order with their priority factors;\n"
       "queue set: the queue's tier (a number)"},
      {"--start", "", "",
       "jobs: pending jobs with when each should start: the scheduler's\n"
       "plan carried forward, each job expected to run as its user's last\n"
       "two did (at most its time limit); BASIS says plan, backfill, held,\n"
       "limit (a core-hour limit holds it back), none (never, as the boards\n"
       "are now) or beyond (past the first 1000);\n"
       "reservation create: TIME it starts: now, now+2h, YYYY-MM-DDTHH:MM\n"
       "(UTC)"},
      {"--format", "", "COL[,COL...]",
       "jobs: these columns, of id, globalid, tenant, name, user, state,\n"
       "reason, pool, queue, priority, tasks, cores, ksps, submit, start,\n"
       "end, time, wait, timelimit, attempt, requeues, nodes, exit"},
      {"--parsable", "", "",
       "submit: print only the job ID; node token, token create: only the\ntoken"},
      {"--wait", "", "",
       "submit: wait for the job to end; exit 0 if it completed, its exit\n"
       "code if it failed, 124 at its time limit, 125 if cancelled;\n"
       "experiment submit: wait for the experiments, print their outputs"},
      {"--count", "", "N",
       "experiment submit: send the experiment N times (default: 1);\n"
       "reservation create: N boards of --pool, chosen by the master"},
      {"--service-tenant", "", "T",
       "experiment: the service is tenant T's (default: your tenant's)"},
      {"--page-size", "", "N", "jobs: jobs fetched per request (default: 1000)"},
      {"--user", "", "NAME", "jobs, usage, token list: only NAME's"},
      {"--pool", "", "NAME",
       "usage: only this pool's task attempts; queue set, tenant set: the\n"
       "pool the caps that follow are for; alloc: the pool to ask in;\n"
       "reservation create: the pool its --count boards are from (default:\n"
       "default)"},
      {"--since", "", "T",
       "jobs: only jobs not ended before T (default: 1d, a day ago); T is\n"
       "YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (local time), now, or a time\n"
       "ago such as 30m, 2h, 7d; --since 1970-01-01 for every job"},
      {"--until", "", "T", "jobs: only jobs submitted before T; usage: attempts started before T"},
      {"--from", "", "T", "invoice, report: the start of the period (T as for --since)"},
      {"--to", "", "T", "invoice, report: the end of the period (T as for --since)"},
      {"--by-user", "", "", "report: a row per user of each tenant"},
      {"--job", "", "ID", "usage, report: only job ID's attempts (an array: every element's)"},
      {"--task", "", "N", "logs, results: task N of the job; run: of the session (default: 0)"},
      {"--out", "", "PATH",
       "results: fetch every file into directory PATH, beside\n"
       "provenance.json; simulate: write the outputs to file PATH; token\n"
       "create: write the token to file PATH, readable by you only"},
      {"--inputs", "", "FILE", "simulate: the input spikes, step,layer,neuron lines"},
      {"--steps", "", "N", "simulate: run N steps"},
      {"--hold", "", "",
       "submit: submit the job held, as the job file's hold: true (sbatch\n"
       "--hold): it waits until snnctl release JOBID"},
      {"--array", "", "INDICES",
       "submit: a job array, as the job file's array: (0-99%8: indices 0 to\n"
       "99, at most 8 running at once; 1,3,5-9:2)"},
      {"--dt", "", "MS",
       "simulate, estimate, submit, experiment submit: a NIR model's step in\n"
       "ms, the one it was trained with (default: 1)"},
      {"--reset", "", "RULE",
       "simulate, estimate, submit, experiment submit: how a NIR model's\n"
       "spiking layers that give no v_reset reset after a spike: subtract\n"
       "(the threshold; the default, as snnTorch and Rockpool) or zero (v\n"
       "set to 0, as the nir library reads such files)"},
      {"--stderr", "", "", "logs: the task's stderr instead of its stdout"},
      {"--follow", "-f", "", "logs: keep printing what the task writes until the job ends"},
      {"--note", "", "TEXT",
       "tenant credit: why (kept with the credit); token create: what the\ntoken is for"},
      {"--reason", "", "TEXT", "node/board drain: why (shown in pool status)"},
      {"--board-type", "", "T",
       "estimate: use this board type's neurons per core (asks the master);\n"
       "alloc: boards of this type only"},
      {"--neurons-per-core", "", "N", "estimate: use N, without asking the master"},
      {"--input-rate", "", "HZ", "estimate, submit with a model: input firing rate (default: 10)"},
      {"--ttl", "", "DURATION",
       "node token: how long the token is valid (default: 15m); token\ncreate: (default: 7d)"},
      {"--boards", "", "FILE",
       "node add, node token: the node's boards file (as snn-agent reads\n"
       "it), what it may declare; reservation create: NODE/BOARD[,...], the\n"
       "boards it takes"},
      {"--duration", "", "DURATION", "reservation create: how long it lasts (2h, 90m, 1d)"},
      {"--tenants", "", "T1,T2",
       "reservation create: the tenants whose jobs may name it (none: only\n"
       "with --flags maint)"},
      {"--flags", "", "F1,F2",
       "reservation create: maint (maintenance: may overlap other\n"
       "reservations), daily (every 24h), flex (its jobs may start before\n"
       "it, outlast it, use the pool's other boards), ignore_jobs (even\n"
       "where running jobs would still run when it starts)"},
      {"--pools", "", "P1,P2", "node add, node token: the pools the node may join (default: any)"},
      {"--within", "", "DURATION", "node wait: how long to wait (default: 2m)"},
      {"--idle", "", "DURATION",
       "connection start: end after this long with no command (default:\n10m, at most 7d)"},
      {"--weight", "", "W", "queue set, tenant set: the fair-share weight"},
      {"--max", "", "N", "queue set: at most N cores of --pool"},
      {"--limit", "", "N", "tenant set: at most N cores of --pool"},
      {"--guaranteed", "", "N", "queue set, tenant set: N cores of --pool it may reclaim"},
      {"--parent", "", "TENANT", "tenant set: the tenant above it in the account tree ('': none)"},
      {"--nominal", "", "N", "tenant set: its own share of --pool in the account tree"},
      {"--borrowing-limit", "", "N",
       "tenant set: at most N cores of --pool beyond its subtree's\nnominal, from its parent"},
      {"--lending-limit", "", "N",
       "tenant set: at most N cores of its subtree's share of --pool\nlent to the rest of the "
       "tree"},
      {"--create", "", "", "queue set, tenant set: the name may be new"},
      {"--cores", "", "N", "alloc: N cores on one board per replica (default: 1)"},
      {"--shape", "", "WxH", "alloc: a W x H rectangle of cores per replica"},
      {"--ksps", "", "K", "alloc: a spike budget of K kilo-spikes/s (default: 1)"},
      {"--streams", "", "N", "alloc: event-routing channels (default: 1)"},
      {"--queue", "", "NAME", "alloc: the queue (default: the master's)"},
      {"--replicas", "", "N", "alloc: N tasks, each on a board of its own (default: 1)"},
      {"--time-limit", "", "DURATION",
       "alloc: end the session after this long (default: the\nmaster's)"},
      {"--keepalive", "", "DURATION",
       "alloc: the session ends if not renewed for this long (default:\nthe master's, 60s)"},
      {"--name", "", "NAME", "alloc: the session's name"},
      {"--detach", "", "", "alloc: print the grant and exit; the caller renews the session"},
      {"--renew", "", "ID", "alloc: renew session ID once (with --keepalive: change it)"},
      {"--alloc", "", "ID", "run: the session to run in (default: $SNN_ALLOC)"},
  };
  return options;
}

const CliCommand* FindCliCommand(const std::vector<std::string>& args) {
  const CliCommand* best = nullptr;
  size_t best_words = 0;
  for (const CliCommand& c : CliCommands()) {
    const std::vector<std::string> words = Words(c.name);
    if (words.size() > args.size() || words.size() <= best_words) continue;
    if (std::equal(words.begin(), words.end(), args.begin())) {
      best = &c;
      best_words = words.size();
    }
  }
  return best;
}

const CliOptionSpec* FindCliOption(std::string_view name) {
  for (const CliOptionSpec& o : CliOptionSpecs()) {
    if (o.name == name || (!o.alias.empty() && o.alias == name)) return &o;
  }
  return nullptr;
}

std::string CliUsageText() {
  std::string out = "usage: snnctl [OPTIONS] COMMAND [ARGS]\n\nCommands:\n";
  for (const CliCommand& c : CliCommands()) {
    std::string synopsis(c.name);
    if (!c.operands.empty()) synopsis += " " + std::string(c.operands);
    std::string summary(c.summary);
    if (!c.options.empty()) {  // "options: --a --b", wrapped to the usage's width
      std::string line = "options:";
      for (std::string_view o : c.options) {
        if (line.size() + 1 + o.size() > kTextWidth) {
          summary += "\n" + line;
          line = "        ";
        }
        line += " " + std::string(o);
      }
      summary += "\n" + line;
    }
    AppendColumns(out, synopsis, summary);
  }
  for (bool global : {true, false}) {
    out += global ? "\nOptions of every command:\n" : "\nOptions of some commands:\n";
    for (const CliOptionSpec& o : CliOptionSpecs()) {
      if (o.global != global) continue;
      std::string synopsis =
          o.alias.empty() ? std::string(o.name) : std::string(o.alias) + ", " + std::string(o.name);
      if (!o.value.empty()) synopsis += " " + std::string(o.value);
      AppendColumns(out, synopsis, o.help);
    }
  }
  return out;
}

std::string CliBashCompletion() {
  // First words, and each first word's second words.
  std::vector<std::string> firsts;
  std::map<std::string, std::vector<std::string>> seconds;
  for (const CliCommand& c : CliCommands()) {
    const std::vector<std::string> words = Words(c.name);
    if (std::find(firsts.begin(), firsts.end(), words[0]) == firsts.end()) {
      firsts.push_back(words[0]);
    }
    if (words.size() > 1) seconds[words[0]].push_back(words[1]);
  }
  std::string options;
  for (const CliOptionSpec& o : CliOptionSpecs()) {
    options += (options.empty() ? "" : " ") + std::string(o.name);
    if (!o.alias.empty()) options += " " + std::string(o.alias);
  }
  std::string commands;
  for (const auto& f : firsts) commands += (commands.empty() ? "" : " ") + f;
  std::string out =
      "# bash completion for snnctl (installed by the snnctl package). Made by\n"
      "# `snnctl --bash-completion` from snnctl's command table (cli/command_table.cc).\n"
      "_snnctl() {\n"
      "  local cur prev words cword\n"
      "  _init_completion || return\n"
      "  local commands=\"" +
      commands +
      "\"\n"
      "  local options=\"" +
      options +
      "\"\n"
      "  case \"$prev\" in\n"
      "    --output|-o) COMPREPLY=($(compgen -W \"table json csv\" -- \"$cur\")); return ;;\n"
      "    --auth) COMPREPLY=($(compgen -W \"munge none\" -- \"$cur\")); return ;;\n"
      "    --state) COMPREPLY=($(compgen -W \"PENDING RUNNING COMPLETED FAILED CANCELLED "
      "TIMEOUT\" -- \"$cur\")); return ;;\n"
      "    --ca-file|--munge-socket) _filedir; return ;;\n"
      "  esac\n"
      "  if [[ \"$cur\" == -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  local command=\"\" i\n"
      "  for ((i = 1; i < cword; i++)); do\n"
      "    case \"${words[i]}\" in\n"
      "      -*) ;;\n"
      "      *) command=\"${words[i]}\"; break ;;\n"
      "    esac\n"
      "  done\n"
      "  case \"$command\" in\n"
      "    \"\") COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\")) ;;\n"
      "    submit|estimate) _filedir '@(yaml|yml|json|nir)' ;;\n";
  for (const auto& [first, subs] : seconds) {
    std::string list;
    for (const auto& s : subs) list += (list.empty() ? "" : " ") + s;
    out += "    " + first + ") COMPREPLY=($(compgen -W \"" + list + "\" -- \"$cur\")) ;;\n";
  }
  out +=
      "  esac\n"
      "}\n"
      "complete -F _snnctl snnctl\n";
  return out;
}

}  // namespace snn
