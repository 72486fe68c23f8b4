#include "cli/command_table.h"

#include <algorithm>
#include <iterator>
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

namespace {

std::vector<CliCommand> UserCommandRows() {
  return {
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
  };
}

std::vector<CliCommand> SiteCommandRows() {
  return {
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
  };
}

std::vector<CliCommand> OperatorCommandRows() {
  return {
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
}

}  // namespace

// Every command, in the order `snnctl help` lists them.
const std::vector<CliCommand>& CliCommands() {
  static const std::vector<CliCommand> commands =
      Concatenated<CliCommand>({UserCommandRows(), SiteCommandRows(), OperatorCommandRows()});
  return commands;
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
