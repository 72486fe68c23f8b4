#include "common/daemon/program_flags.h"

#include <gflags/gflags.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "snn_version.h"

namespace snn {
namespace {

// `path` with its "x/../" and "./" steps taken out (a file compiled in a unity batch is named
// through the batch's folder: "build/unity/../../common/...").
std::string Normal(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

// The project's source root, from this file's own path: flags defined under it are ours.
std::string SourceRoot() {
  std::string self = Normal(__FILE__);
  const std::string tail = "common/daemon/program_flags.cc";
  return self.size() >= tail.size() ? self.substr(0, self.size() - tail.size()) : std::string();
}

// Whether a flag defined in `file` (as its compiler named it: absolute, or relative to the folder
// it was compiled in, as under ccache's base_dir) is the project's: under the source root, or
// with its leading "../" steps taken off, in one of the tree's top folders.
bool OursFile(std::string file, const std::string& root) {
  file = Normal(file);
  if (!root.empty() && root[0] == '/') {
    if (file.rfind(root, 0) == 0) return true;
    if (file[0] == '/') return false;
  }
  while (file.rfind("../", 0) == 0 || file.rfind("./", 0) == 0)
    file = file.substr(file.find('/') + 1);
  for (const char* top : {"bench/", "cli/", "client/", "common/", "drivers/", "examples/", "fuzz/",
                          "master/", "nodeagent/", "sim/", "tests/"}) {
    // An absolute path where this file's is relative (built apart): a top folder inside it.
    if (file.rfind(top, 0) == 0 ||
        (file[0] == '/' && file.find("/" + std::string(top)) != std::string::npos)) {
      return true;
    }
  }
  return false;
}

bool WantsHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return false;
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-help") == 0 ||
        std::strcmp(argv[i], "-h") == 0) {
      return true;
    }
  }
  return false;
}

// "text" wrapped at 100 columns, each line indented by `indent`.
void PrintWrapped(const std::string& text, size_t indent) {
  std::string line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    if (!line.empty() && indent + line.size() + 1 + word.size() > 100) {
      std::cout << std::string(indent, ' ') << line << "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    pos = end + 1;
  }
  if (!line.empty()) std::cout << std::string(indent, ' ') << line << "\n";
}

void PrintHelp(const char* usage) {
  std::cout << "usage: " << usage << "\n\nFlags:\n";
  const std::string root = SourceRoot();
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (const auto& f : flags) {
    if (!OursFile(f.filename, root)) continue;
    std::string head = "  --" + f.name;
    if (f.type == "string") {
      head += "=" + (f.default_value.empty() ? std::string("\"\"") : f.default_value);
    } else {
      head += "=" + f.default_value;
    }
    std::cout << head << "\n";
    PrintWrapped(f.description, 6);
  }
  std::cout << "\nAnd: --flagfile=FILE (flags from a file, one per line), --minloglevel=N (0 "
               "info, 1 warnings, 2 errors), --helpfull (every flag, the libraries' too).\n";
}

}  // namespace

void ParseProgramFlags(int* argc, char*** argv, const char* usage) {
  gflags::SetUsageMessage(usage);
  gflags::SetVersionString(SNN_VERSION " (commit " SNN_COMMIT ")");  // --version
  if (WantsHelp(*argc, *argv)) {
    PrintHelp(usage);
    std::exit(0);
  }
  gflags::ParseCommandLineFlags(argc, argv, true);
}

}  // namespace snn
