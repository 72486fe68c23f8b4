// Every program's --help is its usage and its own flags, not the logging library's, and exits 0.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <regex>
#include <string>

#include "snn_paths.h"

namespace snn::testing {
namespace {

struct Output {
  int exit_code = -1;
  std::string text;
};

Output RunCommand(const std::string& command) {
  Output out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[1024];
  while (fgets(buf, sizeof buf, p) != nullptr) out.text += buf;
  const int status = pclose(p);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(HelpTest, DaemonsPrintTheirOwnFlagsOnlyAndExitZero) {
  for (const auto& [bin, own_flag] :
       {std::pair<std::string, std::string>{SNN_MASTER_BIN, "--metrics_listen=127.0.0.1:7131"},
        {SNN_AGENT_BIN, "--metrics_listen=127.0.0.1:7132"}}) {
    for (const char* help : {" --help", " -h"}) {
      Output out = RunCommand(bin + help);
      EXPECT_EQ(out.exit_code, 0) << bin << help;
      EXPECT_NE(out.text.find(own_flag), std::string::npos) << out.text;
      EXPECT_EQ(out.text.find("logtostderr"), std::string::npos) << out.text;
      EXPECT_EQ(out.text.find("Flags from"), std::string::npos) << out.text;
      EXPECT_EQ(out.text.find("usage: "), 0u) << out.text;
    }
  }
}

TEST(HelpTest, TheDefaultPortIsNotSlurms) {
  Output out = RunCommand(std::string(SNN_MASTER_BIN) + " --help");
  EXPECT_NE(out.text.find("--listen=127.0.0.1:7130"), std::string::npos) << out.text;
  EXPECT_EQ(out.text.find("6817"), std::string::npos) << out.text;
  out = RunCommand(std::string(SNNCTL_BIN) + " --help");
  EXPECT_NE(out.text.find("127.0.0.1:7130"), std::string::npos) << out.text;
}

// `--version` says which build runs: the version and the commit (snnctl printed usage instead).
TEST(HelpTest, EveryProgramPrintsItsVersionAndCommit) {
  const std::string version = R"(\d+\.\d+\.\d+ \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)\n)";
  // snnctl's own line; the daemons' is gflags' ("snn-master version ...").
  for (const auto& [bin, pattern] : {std::pair<std::string, std::string>{SNNCTL_BIN, "snnctl "},
                                     {SNN_MASTER_BIN, "snn-master version "},
                                     {SNN_AGENT_BIN, "snn-agent version "}}) {
    Output out = RunCommand(bin + " --version");
    EXPECT_EQ(out.exit_code, 0) << bin;
    EXPECT_TRUE(std::regex_match(out.text, std::regex(pattern + version))) << out.text;
  }
}

}  // namespace
}  // namespace snn::testing
