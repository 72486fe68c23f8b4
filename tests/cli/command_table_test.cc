// snnctl's command table is the one source of its usage, its option checks, its dispatch and its
// bash completion: the packaged completion is what the table makes, every option a command
// lists is declared and parsed, and a command given an option it does not take says so.
#include "cli/command_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "cli/snnctl.h"
#include "snn_paths.h"

namespace snn {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CommandTableTest, ThePackagedBashCompletionIsTheOneTheTableMakes) {
  const std::string packaged =
      ReadFile(std::string(SNN_SOURCE_DIR) + "/packaging/snnctl/snnctl.bash-completion");
  EXPECT_EQ(packaged, CliBashCompletion()) << "regenerate it: build/cli/snnctl --bash-completion > "
                                              "packaging/snnctl/snnctl.bash-completion";
}

TEST(CommandTableTest, TheReferenceShowsTheUsageTheTableMakes) {
  const std::string doc = ReadFile(std::string(SNN_SOURCE_DIR) + "/docs/reference/snnctl.md");
  const size_t heading = doc.find("## Commands\n");
  ASSERT_NE(heading, std::string::npos);
  const size_t open = doc.find("```\n", heading);
  ASSERT_NE(open, std::string::npos);
  const size_t close = doc.find("```\n", open + 4);
  ASSERT_NE(close, std::string::npos);
  EXPECT_EQ(doc.substr(open + 4, close - open - 4), CliUsageText())
      << "regenerate the block under '## Commands' in docs/reference/snnctl.md with "
         "build/cli/snnctl --help";
}

TEST(CommandTableTest, EveryOptionACommandListsIsDeclaredAndParsed) {
  for (const CliCommand& c : CliCommands()) {
    for (std::string_view name : c.options) {
      const CliOptionSpec* spec = FindCliOption(name);
      ASSERT_NE(spec, nullptr) << c.name << " lists undeclared " << name;
      std::vector<std::string> argv;
      std::istringstream words{std::string(c.name)};
      for (std::string w; words >> w;) argv.push_back(w);
      argv.push_back(std::string(name));
      // --priority is a flag of jobs, and takes a value with queue set; --start a flag of
      // jobs, and takes a value with reservation create.
      const bool takes_value = name == "--priority" ? c.name != "jobs"
                               : name == "--start"  ? c.name == "reservation create"
                                                    : !spec->value.empty();
      if (takes_value) {
        // A value each option takes.
        argv.push_back(
            name == "--state" ? "PENDING"
            : name == "--since" || name == "--until" || name == "--from" || name == "--to" ? "1d"
            : name == "--format"                                                           ? "id"
            : name == "--start"                                                            ? "now"
                                                                                           : "3");
      }
      auto parsed = ParseCliArgs(argv);
      EXPECT_TRUE(parsed.ok()) << c.name << " " << name << ": " << parsed.status().ToString();
    }
  }
}

TEST(CommandTableTest, ACommandGivenAnOptionItDoesNotTakeSaysWhichItTakes) {
  auto wrong = ParseCliArgs({"jobs", "--ttl", "5m"});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(),
            "'jobs' takes no option --ttl (its own: --all-tenants, --state, --priority, --start, "
            "--format, "
            "--page-size, --user, --since, --until)");
  auto none = ParseCliArgs({"show", "1", "--wait"});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(),
            "'show' takes no option --wait (it takes only the global ones)");
  // Aliases are the options they stand for; global options go anywhere.
  EXPECT_TRUE(ParseCliArgs({"logs", "1", "-f", "-o", "json", "--master", "h:1"}).ok());
}

TEST(CommandTableTest, TheLongestMatchNamesTheCommand) {
  EXPECT_EQ(FindCliCommand({"node", "token", "n1"})->name, "node token");
  EXPECT_EQ(FindCliCommand({"tenant", "set", "lab"})->name, "tenant set");
  EXPECT_EQ(FindCliCommand({"submit", "job.yaml"})->name, "submit");
  EXPECT_EQ(FindCliCommand({"node", "frobnicate"}), nullptr);
  EXPECT_EQ(FindCliCommand({}), nullptr);
}

TEST(CommandTableTest, TheUsageShowsEveryCommandAndOption) {
  const std::string usage = CliUsageText();
  for (const CliCommand& c : CliCommands()) {
    EXPECT_NE(usage.find("  " + std::string(c.name)), std::string::npos) << c.name;
  }
  for (const CliOptionSpec& o : CliOptionSpecs()) {
    EXPECT_NE(usage.find(std::string(o.name)), std::string::npos) << o.name;
  }
}

// Help for one command prints that command's options only (snnctl submit --help printed all
// 250 lines), whichever way it is asked for.
TEST(CommandTableTest, HelpForOneCommandShowsItsOwnOptionsOnly) {
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"help", "submit"}, std::vector<std::string>{"submit", "--help"}}) {
    auto o = ParseCliArgs(argv);
    ASSERT_TRUE(o.ok()) << o.status().ToString();
    std::ostringstream out, err;
    EXPECT_EQ(RunCli(*o, out, err), 0) << err.str();
    const std::string text = out.str();
    EXPECT_EQ(text.rfind("usage: snnctl submit FILE", 0), 0u) << text;
    EXPECT_NE(text.find("--reset RULE"), std::string::npos) << text;
    EXPECT_EQ(text.find("--pools"), std::string::npos) << text;  // node add's, not submit's
    EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 40) << text;
  }
  auto o = ParseCliArgs({"help", "no-such-command"});
  ASSERT_TRUE(o.ok());
  std::ostringstream out, err;
  EXPECT_EQ(RunCli(*o, out, err), 2);
  EXPECT_EQ(err.str(), "snnctl: no command 'no-such-command' (see snnctl --help)\n");
}

}  // namespace
}  // namespace snn
