// What snnctl's command line said: the options every command reads, parsed from argv and the
// environment (cli/snnctl.h parses them; cli/command_table.h lists which command reads which).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace snn {

struct CliOptions {
  std::string master;            // from --master, else SNN_MASTER, else 127.0.0.1:7130
  std::string output = "table";  // table, json, or (usage) csv
  std::string tenant;            // from --tenant, else SNN_TENANT, else the user
  std::string user;              // --auth=none only: the name claimed
  std::string auth;              // munge (default) or none; from --auth, else SNN_AUTH
  std::string ca_file;           // from --ca-file, else SNN_CA_FILE, else /etc/snn/tls/ca.crt
  std::string munge_socket;      // from --munge-socket, else SNN_MUNGE_SOCKET, else munge's default
  std::string ttl;               // node token: how long the token is valid
  std::string within;            // node wait: how long to wait
  int timeout_ms = 5000;
  bool all_tenants = false;
  bool parsable = false;
  bool hold = false;  // submit: submitted held (sbatch --hold)
  bool wait = false;  // submit: wait for the job to end; exit with its outcome
  bool help = false;
  bool bash_completion = false;  // --bash-completion: print the completion script
  bool version = false;          // --version: print the version and the commit built
  std::vector<std::string> states;
  std::string reason;             // node/board drain
  uint32_t page_size = 1000;      // jobs: jobs per request
  std::string job_user;           // jobs: only this user's
  std::string since = "1d";       // jobs: active at or after (see ParseTimeArg)
  std::string until;              // jobs: submitted before; empty: no bound
  std::string from, to;           // invoice: the period (default: this month)
  std::string note;               // tenant credit: why
  std::string board_type;         // estimate
  double input_rate_hz = 10;      // estimate
  uint32_t neurons_per_core = 0;  // estimate: 0 asks the master
  bool show_priority = false;     // jobs: pending jobs with their priority factors
  bool show_start = false;        // jobs: pending jobs with their forecast start
  bool by_user = false;           // report: a row per user
  std::string format;             // jobs: the columns (--format id,name,...)
  uint32_t task = 0;              // logs: the task's index
  bool stderr_stream = false;     // logs: stderr instead of stdout
  bool follow = false;            // logs -f
  std::string out_dir;            // results: where to write the files; simulate: the file
  std::string inputs_file;        // simulate: the input spikes
  uint32_t steps = 0;             // simulate: how many steps
  double step_ms = 0;             // simulate, estimate, submit: a NIR model's step (0: 1 ms)
  bool create = false;            // queue/tenant set: the name may be new
  bool detach = false;            // alloc: print the grant and exit
  // queue/tenant set: --priority, --weight, ...; alloc and run: --cores, --keepalive, ...
  std::map<std::string, std::string> settings;
  // One of `settings` ("name" for --name), or "" if not given.
  std::string setting(const std::string& name) const {
    auto it = settings.find(name);
    return it == settings.end() ? "" : it->second;
  }
  std::vector<std::string> args;  // the command and its operands
};

}  // namespace snn
