// snnctl's dispatch: the command the arguments name, from the command table.
#include "cli/snnctl.h"

#include "cli/command_table.h"

namespace snn {

int RunCli(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.bash_completion) {
    out << CliBashCompletion();
    return 0;
  }
  if (o.help) {
    out << CliUsageText();
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
