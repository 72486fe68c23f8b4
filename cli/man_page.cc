#include <cctype>
#include <string>

#include "cli/command_table.h"
#include "snn_version.h"

namespace snn {
namespace {

// Text as roff reads it: backslashes and hyphens escaped, no line starting with a control
// character.
std::string Roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string Header(const std::string& name, std::string_view what) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string first(what.substr(0, what.find('\n')));
  return ".TH " + upper + " 1 \"\" \"snnctl " SNN_VERSION "\" \"snn\"\n.SH NAME\n" + Roff(name) +
         " \\- " + Roff(first) + "\n";
}

}  // namespace

std::string CliManPage(const CliCommand* command) {
  if (command == nullptr) {
    return Header("snnctl", "the command line of the snn cluster resource manager") +
           ".SH SYNOPSIS\n.B snnctl\n[OPTIONS] COMMAND [ARGS]\n.SH DESCRIPTION\n"
           "Each command has a page of its own: snnctl\\-COMMAND(1) (snnctl\\-submit, "
           "snnctl\\-node\\-token, ...), and snnctl help COMMAND prints it.\n.PP\n.nf\n" +
           Roff(CliUsageText()) + ".fi\n";
  }
  std::string name = "snnctl-" + std::string(command->name);
  for (char& c : name) c = c == ' ' ? '-' : c;
  std::string page = Header(name, command->summary) + ".SH SYNOPSIS\n.B snnctl " +
                     Roff(command->name) + "\n" + Roff(command->operands) +
                     (command->options.empty() ? "" : " [OPTIONS]") + "\n.SH DESCRIPTION\n" +
                     Roff(command->summary) + "\n";
  if (!command->options.empty()) {
    page += ".SH OPTIONS\n";
    for (std::string_view option : command->options) {
      const CliOptionSpec* o = FindCliOption(option);
      if (o == nullptr) continue;
      page += ".TP\n.B " + Roff(o->name) + (o->value.empty() ? "" : " " + Roff(o->value)) + "\n" +
              Roff(o->help) + "\n";
    }
  }
  return page + ".SH SEE ALSO\nsnnctl(1); the options of every command: snnctl \\-\\-help\n";
}

}  // namespace snn
