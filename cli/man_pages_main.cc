// snn-man-pages DIR: writes snnctl's man pages into DIR (snnctl.1, and snnctl-COMMAND.1 for
// each command), made from snnctl's command table as its help is. Run by the build; the snnctl
// package installs them.
#include <fstream>
#include <iostream>

#include "cli/command_table.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: snn-man-pages DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  auto write = [&](const std::string& name, const std::string& page) {
    std::ofstream out(dir + "/" + name + ".1");
    out << page;
    return static_cast<bool>(out);
  };
  bool ok = write("snnctl", snn::CliManPage(nullptr));
  for (const snn::CliCommand& c : snn::CliCommands()) {
    std::string name = "snnctl-" + std::string(c.name);
    for (char& ch : name) ch = ch == ' ' ? '-' : ch;
    ok = write(name, snn::CliManPage(&c)) && ok;
  }
  if (!ok) std::cerr << "snn-man-pages: cannot write into " << dir << "\n";
  return ok ? 0 : 1;
}
