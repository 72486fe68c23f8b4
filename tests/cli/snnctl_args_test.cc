#include <gtest/gtest.h>

#include <sstream>

#include "cli/snnctl.h"

namespace snn {
namespace {

TEST(SnnctlArgsTest, ParsesOptionsAnywhere) {
  auto o = ParseCliArgs({"jobs", "--master", "127.0.0.1:9", "-o", "json", "--state=PENDING,RUNNING",
                         "--all-tenants"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->master, "127.0.0.1:9");
  EXPECT_EQ(o->output, "json");
  EXPECT_TRUE(o->all_tenants);
  EXPECT_EQ(o->states, (std::vector<std::string>{"PENDING", "RUNNING"}));
  EXPECT_EQ(o->args, std::vector<std::string>{"jobs"});
}

TEST(SnnctlArgsTest, RejectsUnknownOptionsAndBadValues) {
  EXPECT_FALSE(ParseCliArgs({"jobs", "--colour"}).ok());
  EXPECT_FALSE(ParseCliArgs({"jobs", "-o", "xml"}).ok());
  EXPECT_FALSE(ParseCliArgs({"jobs", "--master"}).ok());
  EXPECT_FALSE(ParseCliArgs({"jobs", "--timeout", "0"}).ok());
}

// A negative amount is an operand, not an option (issue 34: `tenant credit T -0.49` was refused
// as an unknown option '-0.49').
TEST(SnnctlArgsTest, ANegativeNumberIsAnOperand) {
  auto o = ParseCliArgs({"tenant", "credit", "lab", "-0.49", "--note", "refund"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->args, (std::vector<std::string>{"tenant", "credit", "lab", "-0.49"}));
  EXPECT_TRUE(ParseCliArgs({"tenant", "credit", "lab", "-.5"}).ok());
  EXPECT_FALSE(ParseCliArgs({"tenant", "credit", "lab", "-x"}).ok());
}

TEST(SnnctlArgsTest, UsageErrorsDoNotNeedAMaster) {
  std::ostringstream out, err;
  auto o = ParseCliArgs({"show", "abc", "--master", "127.0.0.1:1"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(RunCli(*o, out, err), 1);
  EXPECT_EQ(err.str(),
            "snnctl: job ID 'abc' is not a positive number (or ARRAY_INDEX, ARRAY_[A-B,C])\n");
  std::ostringstream out2, err2;
  auto bad = ParseCliArgs({"frobnicate"});
  EXPECT_EQ(RunCli(*bad, out2, err2), 2);
  EXPECT_NE(err2.str().find("unknown command"), std::string::npos);
  std::ostringstream out3, err3;
  auto help = ParseCliArgs({"--help"});
  EXPECT_EQ(RunCli(*help, out3, err3), 0);
  EXPECT_NE(out3.str().find("pool status"), std::string::npos);
}

}  // namespace
}  // namespace snn
