#include "common/base/job_validation.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace snn {
namespace {

v1::JobSpec ValidSpec() {
  v1::JobSpec spec;
  spec.set_name("ok");
  spec.set_min_replicas(1);
  spec.set_max_replicas(1);
  spec.mutable_task()->set_command("/bin/true");
  auto* r = spec.mutable_task()->mutable_resources();
  r->set_cores(4);
  r->set_ksps(100);
  r->set_streams(1);
  return spec;
}

TEST(JobValidationTest, AcceptsAValidSpec) { EXPECT_TRUE(ValidateJobSpec(ValidSpec()).ok()); }

TEST(JobValidationTest, RejectsZeroAndAbsurdResources) {
  auto spec = ValidSpec();
  spec.mutable_task()->mutable_resources()->set_cores(0);
  EXPECT_NE(ValidateJobSpec(spec).message().find("task.resources.cores"), std::string::npos);
  spec = ValidSpec();
  spec.mutable_task()->mutable_resources()->set_ksps(JobLimits::kMaxKsps + 1);
  EXPECT_NE(ValidateJobSpec(spec).message().find("task.resources.ksps"), std::string::npos);
  spec = ValidSpec();
  spec.mutable_task()->mutable_resources()->set_streams(0);
  EXPECT_FALSE(ValidateJobSpec(spec).ok());
}

TEST(JobValidationTest, RejectsStructuralMistakes) {
  auto spec = ValidSpec();
  spec.mutable_task()->clear_command();
  EXPECT_FALSE(ValidateJobSpec(spec).ok());
  spec = ValidSpec();
  spec.set_max_replicas(0);
  EXPECT_FALSE(ValidateJobSpec(spec).ok());
  spec = ValidSpec();
  spec.set_min_replicas(3);
  spec.set_max_replicas(2);
  EXPECT_NE(ValidateJobSpec(spec).message().find("below replicas.min"), std::string::npos);
  spec = ValidSpec();
  (*spec.mutable_task()->mutable_env())["SNN_CORES"] = "x";
  EXPECT_NE(ValidateJobSpec(spec).message().find("set by the agent"), std::string::npos);
  spec = ValidSpec();
  spec.set_pool("bad pool!");
  EXPECT_FALSE(ValidateJobSpec(spec).ok());
  spec = ValidSpec();
  spec.set_priority(-1);
  EXPECT_FALSE(ValidateJobSpec(spec).ok());
}

// What runs is what was submitted: a NUL would cut a C string short (the command, an argument,
// an environment variable), and a relative working directory would depend on where the agent
// happens to stand.
// The master checks a constraint itself: a client other than snnctl (the HTTP API) may send one.
TEST(JobValidationTest, AConstraintThatDoesNotParseIsRefused) {
  auto spec = ValidSpec();
  spec.mutable_task()->mutable_resources()->set_constraints("rev >= 3 &&");
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "constraints: expected an attribute name (a comparison: NAME op value) at character "
            "12, found the end");
  spec.mutable_task()->mutable_resources()->set_constraints("rev >= 3");
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
}

TEST(JobValidationTest, RejectsNulCharactersAndRelativeWorkdirs) {
  const std::string nul("a\0b", 3);
  struct Case {
    std::function<void(v1::TaskSpec&)> spoil;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {[&](v1::TaskSpec& t) { t.set_command("/bin/echo" + nul); }, "task.command holds a NUL"},
      {[&](v1::TaskSpec& t) {
         t.add_args("ok");
         t.add_args(nul);
       },
       "task.args[1] holds a NUL"},
      {[&](v1::TaskSpec& t) { (*t.mutable_env())[nul] = "v"; }, "bad variable name 'a\\0b'"},
      {[&](v1::TaskSpec& t) { (*t.mutable_env())["KEY"] = nul; }, "task.env.KEY holds a NUL"},
      {[&](v1::TaskSpec& t) { t.set_workdir("/tmp" + nul); }, "task.workdir holds a NUL"},
      {[&](v1::TaskSpec& t) { t.set_workdir("run/here"); }, "task.workdir must be an absolute"},
  };
  for (const auto& c : cases) {
    auto spec = ValidSpec();
    c.spoil(*spec.mutable_task());
    const Status s = ValidateJobSpec(spec);
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << s.message();
  }
  auto spec = ValidSpec();
  spec.mutable_task()->set_workdir("/home/lab/run");
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
}

// An oversized job's error names the field that makes it big.
TEST(JobValidationTest, AnOversizedJobNamesTheFieldThatMakesItBig) {
  auto spec = ValidSpec();
  for (int i = 0; i < 700; ++i) spec.mutable_task()->add_args(std::string(1000, 'a'));
  Status s = ValidateJobSpec(spec);
  EXPECT_NE(s.message().find("most of them in task.args (700000 bytes)"), std::string::npos)
      << s.message();
  spec = ValidSpec();
  spec.mutable_task()->mutable_resources()->set_model(std::string(600000, 'm'));
  s = ValidateJobSpec(spec);
  EXPECT_NE(s.message().find("most of them in the other fields"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("at most 524288 are accepted"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace snn
