#include "cli/job_file.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace snn {
namespace {

TEST(JobFileTest, ParsesAFullJob) {
  auto spec = ParseJobYaml(R"(
name: train
tenant: lab
pool: big
queue: batch
priority: 10
preemptible: true
time_limit: 1:30:00
replicas: {min: 2, max: 4}
task:
  command: /opt/app/run
  args: [--steps, "100"]
  env: {MODEL: chain}
  workdir: /tmp
  resources: {cores: 16, ksps: 500, streams: 2, board_type: sim-v2}
)",
                           "fallback");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->name(), "train");
  EXPECT_EQ(spec->time_limit_s(), 5400u);
  EXPECT_EQ(spec->min_replicas(), 2u);
  EXPECT_EQ(spec->max_replicas(), 4u);
  EXPECT_TRUE(spec->preemptible());
  EXPECT_EQ(spec->task().args_size(), 2);
  EXPECT_EQ(spec->task().env().at("MODEL"), "chain");
  EXPECT_EQ(spec->task().resources().board_type(), "sim-v2");
}

TEST(JobFileTest, DefaultsAreSensible) {
  auto spec = ParseJobYaml("task: {command: /bin/true, resources: {cores: 1, ksps: 1}}", "job");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->name(), "job");
  EXPECT_EQ(spec->min_replicas(), 1u);
  EXPECT_EQ(spec->task().resources().streams(), 1u);
  EXPECT_EQ(spec->time_limit_s(), 0u);  // the master applies its default
}

TEST(JobFileTest, EachMistakeIsNamed) {
  struct Case {
    const char* yaml;
    const char* expect;
  } cases[] = {
      {"", "empty"},
      {"name: [x", "not valid YAML"},
      {"- a\n- b", "must be a mapping"},
      {"colour: red\ntask: {}", "unknown field 'colour'"},
      {"name: x", "task is required"},
      {"task: {resources: {cores: 1, ksps: 1}}", "task.command is required"},
      {"task: {command: x}", "task.resources is required"},
      {"task: {command: x, resources: {ksps: 1}}", "task.resources.cores is required"},
      {"task: {command: x, resources: {cores: 0, ksps: 1}}", "task.resources.cores is 0"},
      {"task: {command: x, resources: {cores: -3, ksps: 1}}", "task.resources.cores is -3"},
      {"task: {command: x, resources: {cores: 1, ksps: 999999999999}}", "task.resources.ksps"},
      {"task: {command: x, resources: {cores: lots, ksps: 1}}", "must be a whole number"},
      {"task: {command: x, resources: {cores: 1, ksps: 1, gpus: 2}}", "unknown field 'gpus'"},
      {"time_limit: 0\ntask: {command: x, resources: {cores: 1, ksps: 1}}", "time_limit"},
      {"time_limit: soon\ntask: {command: x, resources: {cores: 1, ksps: 1}}", "time_limit"},
      {"replicas: 0\ntask: {command: x, resources: {cores: 1, ksps: 1}}", "replicas is 0"},
      {"replicas: {min: 3, max: 2}\ntask: {command: x, resources: {cores: 1, ksps: 1}}",
       "below replicas.min"},
      {"priority: -1\ntask: {command: x, resources: {cores: 1, ksps: 1}}", "priority is -1"},
      {"preemptible: maybe\ntask: {command: x, resources: {cores: 1, ksps: 1}}", "true or false"},
      {"task: {command: x, args: oops, resources: {cores: 1, ksps: 1}}",
       "task.args must be a list"},
  };
  for (const auto& c : cases) {
    auto spec = ParseJobYaml(c.yaml, "j");
    ASSERT_FALSE(spec.ok()) << c.yaml;
    EXPECT_NE(spec.status().message().find(c.expect), std::string::npos)
        << c.yaml << "\n  -> " << spec.status().message();
  }
}

TEST(JobFileTest, FileProblemsAreNamed) {
  EXPECT_NE(LoadJobFile("/no/such/job.yaml").status().message().find("no such file"),
            std::string::npos);
  EXPECT_NE(
      LoadJobFile(std::filesystem::temp_directory_path()).status().message().find("is a directory"),
      std::string::npos);
  auto examples = std::filesystem::path(SNN_SOURCE_DIR) / "etc" / "examples";
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(examples)) {
    auto spec = LoadJobFile(entry.path());
    EXPECT_TRUE(spec.ok()) << entry.path() << ": " << spec.status().message();
    ++n;
  }
  EXPECT_GE(n, 3) << "the example jobs should all parse";
}

}  // namespace
}  // namespace snn
