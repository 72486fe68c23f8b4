#include <string>

#include "cli/command_table.h"

namespace snn {

std::string CliCommandHelp(const CliCommand& command) {
  std::string out = "usage: snnctl " + std::string(command.name);
  if (!command.operands.empty()) out += " " + std::string(command.operands);
  out += command.options.empty() ? "\n\n" : " [OPTIONS]\n\n";
  for (char c : command.summary) out += c == '\n' ? ' ' : c;
  out += "\n";
  if (!command.options.empty()) {
    out += "\nOptions:\n";
    for (std::string_view name : command.options) {
      const CliOptionSpec* o = FindCliOption(name);
      if (o == nullptr) continue;
      std::string synopsis = std::string(o->name);
      if (!o->value.empty()) synopsis += " " + std::string(o->value);
      AppendColumns(out, synopsis, o->help);
    }
  }
  out += "\nand the options of every command (--master, --tenant, -o, ...): snnctl --help\n";
  return out;
}

}  // namespace snn
