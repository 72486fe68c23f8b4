#include "common/base/job_validation.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace snn
