// snnctl's command line: the options parsed into CliOptions (with the environment's defaults),
// and each checked against what its command takes (cli/command_table.h). Pure but for reading
// the environment.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/command_table.h"
#include "cli/snnctl.h"
#include "cli/time_arg.h"
#include "common/base/split.h"
#include "common/base/utf8.h"

namespace snn {
namespace {

constexpr char kDefaultMaster[] = "127.0.0.1:7130";

// The options whose value is a number, checked against its range (false: `arg` is none of them).
Result<bool> SetNumberOption(CliOptions& o, const std::string& arg, const std::string& v) {
  if (arg == "--steps") {
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), o.steps);
    if (ec != std::errc() || p != v.data() + v.size() || o.steps < 1 || o.steps > 100'000'000) {
      return InvalidArgument("--steps must be 1 to 100000000");
    }
    return true;
  }
  if (arg == "--dt") {
    char* end = nullptr;
    o.step_ms = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0' || !(o.step_ms >= 0.001 && o.step_ms <= 1000)) {
      return InvalidArgument("--dt must be a step in ms from 0.001 to 1000 (e.g. 0.1)");
    }
    return true;
  }
  if (arg == "--timeout") {
    int seconds = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
    if (ec != std::errc() || p != v.data() + v.size() || seconds < 1 || seconds > 3600) {
      return InvalidArgument("--timeout must be 1 to 3600 seconds");
    }
    o.timeout_ms = seconds * 1000;
    return true;
  }
  if (arg == "--page-size") {
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), o.page_size);
    if (ec != std::errc() || p != v.data() + v.size() || o.page_size < 1 || o.page_size > 10000) {
      return InvalidArgument("--page-size must be 1 to 10000");
    }
    return true;
  }
  if (arg == "--input-rate") {
    char* end = nullptr;
    o.input_rate_hz = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0' || !(o.input_rate_hz >= 0) || o.input_rate_hz > 100000) {
      return InvalidArgument("--input-rate must be a rate in Hz from 0 to 100000");
    }
    return true;
  }
  if (arg == "--neurons-per-core") {
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), o.neurons_per_core);
    if (ec != std::errc() || p != v.data() + v.size() || o.neurons_per_core == 0) {
      return InvalidArgument("--neurons-per-core must be a positive number");
    }
    return true;
  }
  return false;
}

// An option that takes a value (given as `v`), checked and set.
Status SetValueOption(CliOptions& o, const std::string& arg, const std::string& v) {
  if (auto number = SetNumberOption(o, arg, v); !number.ok() || *number) return number.status();
  if (arg == "--master") o.master = v;
  if (arg == "--ca-file") o.ca_file = v;
  if (arg == "--munge-socket") o.munge_socket = v;
  if (arg == "--ttl") o.ttl = v;
  if (arg == "--within") o.within = v;
  if (arg == "--user") o.job_user = v;
  if (arg == "--since" || arg == "--until" || arg == "--from" || arg == "--to") {
    // checked here, worked out when run
    if (auto t = ParseTimeArg(v, 0); !t.ok()) return t.status();
    (arg == "--since" ? o.since : arg == "--until" ? o.until : arg == "--from" ? o.from : o.to) = v;
  }
  if (arg == "--note") o.note = v;
  if (arg == "--out") o.out_dir = v;
  if (arg == "--inputs") o.inputs_file = v;
  if (arg == "--format") o.format = v;
  if (arg == "--auth") {
    if (v != "munge" && v != "none") return InvalidArgument("--auth must be munge or none");
    o.auth = v;
  }
  if (arg == "--tenant") o.tenant = v;
  if (arg == "-o" || arg == "--output") {
    if (v != "table" && v != "json" && v != "csv") {
      return InvalidArgument("output format '" + v + "' is not table, json or csv");
    }
    o.output = v;
  }
  if (arg == "--board-type") o.board_type = v;
  if (arg == "--reason") o.reason = v;
  if (arg == "--state") {
    for (std::string& state : SplitList(v)) o.states.push_back(std::move(state));
  }

  return Status::Ok();
}

// A flag (an option without a value) given.
void SetFlag(CliOptions& o, const std::string& arg) {
  if (arg == "--detach") o.detach = true;
  if (arg == "--start") o.show_start = true;
  if (arg == "--stderr") o.stderr_stream = true;
  if (arg == "-f" || arg == "--follow") o.follow = true;
  if (arg == "--csv") o.output = "csv";
  if (arg == "--by-user") o.by_user = true;
  if (arg == "--all-tenants") o.all_tenants = true;
  if (arg == "--parsable") o.parsable = true;
  if (arg == "--wait") o.wait = true;
  if (arg == "--hold") o.hold = true;
}

// Every argument may end up in a protobuf string, which must be UTF-8.
Status CheckUtf8(const std::vector<std::string>& argv) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (size_t bad = 0; !ValidUtf8(argv[i], bad)) {
      return InvalidArgument("argument " + std::to_string(i + 1) + " is not UTF-8 text (byte " +
                             std::to_string(bad) + ")");
    }
  }
  return Status::Ok();
}

// Each command takes the global options and its own.
Status CheckOwnOptions(const CliOptions& o, const std::vector<std::string>& given) {
  if (const CliCommand* command = FindCliCommand(o.args); command != nullptr && !o.help) {
    for (const std::string& name : given) {
      const CliOptionSpec* spec = FindCliOption(name);
      if (spec == nullptr || spec->global) continue;
      if (std::find(command->options.begin(), command->options.end(), name) ==
          command->options.end()) {
        std::string own;
        for (std::string_view n : command->options)
          own += (own.empty() ? "" : ", ") + std::string(n);
        return InvalidArgument(
            "'" + std::string(command->name) + "' takes no option " + name +
            (own.empty() ? " (it takes only the global ones)" : " (its own: " + own + ")"));
      }
    }
  }
  return Status::Ok();
}

// What the command line left unset, from the environment (or the defaults).
Status FillFromEnvironment(CliOptions& o) {
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
  return Status::Ok();
}

}  // namespace

Result<CliOptions> ParseCliArgs(const std::vector<std::string>& argv) {
  CliOptions o;
  std::vector<std::string> given;  // the options given, by their names
  if (Status text = CheckUtf8(argv); !text.ok()) return text;
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
    // "-0.49" is a negative number (tenant credit T -0.49), not an option.
    const bool negative_number =
        arg.size() > 1 && arg[0] == '-' &&
        (std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
    if (o.args.size() == 1 && o.args[0] == "run" && (arg.empty() || arg[0] != '-')) {
      // snnctl run [options] CMD ARGS...: what follows the command is the step's, as it is.
      o.args.insert(o.args.end(), argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
      break;
    }
    if (arg.size() > 1 && arg[0] == '-' && !negative_number) {
      const CliOptionSpec* spec = FindCliOption(arg);
      given.push_back(spec != nullptr ? std::string(spec->name) : arg);
    }
    if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "--bash-completion") {
      o.bash_completion = true;
    } else if (arg == "--version") {
      o.version = true;
    } else if (arg == "--start" && !o.args.empty() && o.args[0] == "reservation") {
      auto v = take(arg);  // reservation create: when it starts
      if (!v.ok()) return v.status();
      o.settings["start"] = *v;
    } else if (arg == "--priority" && !o.args.empty() && o.args[0] == "jobs") {
      if (has_value) return InvalidArgument("jobs --priority takes no value");
      o.show_priority = true;
    } else if (arg == "--priority" || arg == "--weight" || arg == "--pool" || arg == "--max" ||
               arg == "--limit" || arg == "--guaranteed" || arg == "--boards" || arg == "--pools" ||
               arg == "--cores" || arg == "--shape" || arg == "--ksps" || arg == "--streams" ||
               arg == "--keepalive" || arg == "--time-limit" || arg == "--replicas" ||
               arg == "--name" || arg == "--renew" || arg == "--alloc" || arg == "--queue" ||
               arg == "--count" || arg == "--service-tenant" || arg == "--array" ||
               arg == "--job" || arg == "--duration" || arg == "--tenants" || arg == "--flags" ||
               arg == "--parent" || arg == "--nominal" || arg == "--borrowing-limit" ||
               arg == "--lending-limit" || arg == "--idle" || arg == "--reset") {
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
               arg == "--note" || arg == "--format" || arg == "--out" || arg == "--inputs" ||
               arg == "--steps" || arg == "--dt") {
      auto v = take(arg);
      if (!v.ok()) return v.status();
      if (Status set = SetValueOption(o, arg, *v); !set.ok()) return set;
    } else if (arg == "--task") {
      auto v = take(arg);
      if (!v.ok()) return v.status();
      auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), o.task);
      if (ec != std::errc() || p != v->data() + v->size()) {
        return InvalidArgument("--task must be a task's index (0, 1, ...)");
      }
    } else if (arg == "--all-tenants" || arg == "--parsable" || arg == "--wait" || arg == "--csv" ||
               arg == "--by-user" || arg == "--stderr" || arg == "-f" || arg == "--follow" ||
               arg == "--detach" || arg == "--start" || arg == "--hold") {
      if (has_value) return InvalidArgument(arg + " takes no value");
      SetFlag(o, arg);
    } else if (arg.size() > 1 && arg[0] == '-' && !negative_number) {
      return InvalidArgument("unknown option '" + arg + "' (see snnctl --help)");
    } else {
      o.args.push_back(arg);
    }
  }
  if (Status own = CheckOwnOptions(o, given); !own.ok()) return own;
  if (Status env = FillFromEnvironment(o); !env.ok()) return env;
  return o;
}

}  // namespace snn
