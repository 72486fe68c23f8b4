// snnctl's commands and options, each declared once: a command is one row (its words, operands,
// what it does, the options it takes, its handler), an option one row (its name, value and
// help). The usage text (`snnctl --help`), the check that a command is given only its own
// options, the dispatch, and the bash completion (`snnctl --bash-completion`) are all made from
// these tables. Plain constants: safe from any thread.
#pragma once

#include <iterator>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_options.h"

namespace snn {

using CommandHandler = int (*)(const CliOptions&, std::ostream&, std::ostream&);

struct CliCommand {
  std::string_view name;      // one or two words: "submit", "node token"
  std::string_view operands;  // as shown in the usage: "FILE.yaml", "JOBID..."
  std::string_view summary;   // what it does; lines after the first are indented in the usage
  std::vector<std::string_view> options;  // the options of its own (every command takes the
                                          // global ones)
  CommandHandler run;
};

struct CliOptionSpec {
  std::string_view name;   // "--wait"
  std::string_view alias;  // "-f", or empty
  std::string_view value;  // the placeholder of its value ("N", "T"), empty for a flag
  std::string_view help;   // one or more lines
  bool global = false;     // taken by every command
};

const std::vector<CliCommand>& CliCommands();
const std::vector<CliOptionSpec>& CliOptionSpecs();  // cli/option_table.cc

// A table written in parts (each a screen), as one.
template <typename T>
std::vector<T> Concatenated(std::vector<std::vector<T>> parts) {
  std::vector<T> all;
  for (auto& part : parts) std::move(part.begin(), part.end(), std::back_inserter(all));
  return all;
}

// The command `args` names (the longest match of its words), or null.
const CliCommand* FindCliCommand(const std::vector<std::string>& args);
// The option spec named `name` or aliased by it, or null.
const CliOptionSpec* FindCliOption(std::string_view name);

// `snnctl --help`, made from the tables.
std::string CliUsageText();
// One command's help (`snnctl help CMD`, `snnctl CMD --help`): its synopsis, what it does, and its
// own options with their help (cli/command_help.cc).
std::string CliCommandHelp(const CliCommand& command);
// A command's man page (roff), or with null snnctl(1) itself (cli/man_page.cc).
std::string CliManPage(const CliCommand* command);
// Appends `synopsis` and `text` (lines) in the usage's two columns.
void AppendColumns(std::string& out, const std::string& synopsis, std::string_view text);
// A bash completion script for snnctl, made from the tables.
std::string CliBashCompletion();

}  // namespace snn
