// snnctl's dispatch: the command the arguments name, from the command table.
#include "cli/snnctl.h"

#include "cli/command_table.h"
#include "snn_version.h"

namespace snn {

int RunCli(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.bash_completion) {
    out << CliBashCompletion();
    return 0;
  }
  if (o.version) {
    out << "snnctl " SNN_VERSION " (commit " SNN_COMMIT ")\n";
    return 0;
  }
  // `snnctl help [CMD]`, `snnctl CMD --help`: one command's help, or all of it.
  if (o.help || (!o.args.empty() && o.args[0] == "help")) {
    std::vector<std::string> named = o.args;
    if (!named.empty() && named[0] == "help") named.erase(named.begin());
    if (named.empty()) {
      out << CliUsageText();
      return 0;
    }
    const CliCommand* command = FindCliCommand(named);
    if (command == nullptr) {
      err << "snnctl: no command '" << named[0] << (named.size() > 1 ? " " + named[1] : "")
          << "' (see snnctl --help)\n";
      return 2;
    }
    out << CliCommandHelp(*command);
    return 0;
  }
  if (o.args.empty()) {
    err << CliUsageText();
    return 2;
  }
  const CliCommand* command = FindCliCommand(o.args);
  if (command == nullptr) {
    // A known first word with an unknown second one names both.
    bool known_first = false;
    for (const CliCommand& c : CliCommands()) {
      known_first = known_first || c.name.substr(0, c.name.find(' ')) == o.args[0];
    }
    err << "snnctl: unknown command '" << o.args[0]
        << (known_first && o.args.size() > 1 ? " " + o.args[1] : "") << "' (see snnctl --help)\n";
    return 2;
  }
  return command->run(o, out, err);
}

}  // namespace snn
