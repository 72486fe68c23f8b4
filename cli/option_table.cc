// snnctl's options, one row each (cli/command_table.h).
#include "cli/command_table.h"

namespace snn {
namespace {

std::vector<CliOptionSpec> GeneralOptionRows() {
  return {
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
  };
}

std::vector<CliOptionSpec> CommandOptionRows() {
  return {
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
}

}  // namespace

const std::vector<CliOptionSpec>& CliOptionSpecs() {
  static const std::vector<CliOptionSpec> options =
      Concatenated<CliOptionSpec>({GeneralOptionRows(), CommandOptionRows()});
  return options;
}

}  // namespace snn
