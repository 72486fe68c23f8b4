// Tasks isolated from each other, on real daemons: each task runs as the Unix user who submitted
// its job, in its own cgroup with the job's memory and process limits, with files only its user
// can read; the gateway token never sits in the environment. A task of another tenant tries
// everything the attack used (/proc/PID/environ, the token, the agent's record, stdout,
// signals, another user's command line in /proc) and gets nothing. Root's jobs run only where the
// agent allows it.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

// daemon: lab-a; sys: lab-b. Debian's base accounts, on every Debian 12 machine.
constexpr char kPolicy[] = R"(access: {personal_tenants: false}
tenants:
  - {name: lab-a, users: [daemon]}
  - {name: lab-b, users: [sys]}
)";

uid_t UidOf(const char* user) {
  const passwd* pw = getpwnam(user);
  return pw ? pw->pw_uid : static_cast<uid_t>(-1);
}

class IsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "runs tasks as other users: needs root";
    std::ofstream(cluster_.dir() + "/policy.yaml") << kPolicy;
    cluster_.StartMaster({"--policy_file=" + cluster_.dir() + "/policy.yaml"});
  }

  void StartAgent(const std::vector<std::string>& flags = {}) {
    cluster_.StartAgent("node1", SmallBoards(1, 4, 1000, 4), flags);
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }

  // Submits, as Unix user `user` for `tenant`, a job running `script` under /bin/sh -c.
  void SubmitAs(const std::string& user, const std::string& tenant, const std::string& name,
                const std::string& script, const std::string& extra = "") {
    const std::string file = cluster_.dir() + "/" + name + ".yaml";
    std::ofstream(file) << "name: " << name << "\ntime_limit: 10m\ntask:\n  command: /bin/sh\n"
                        << "  args: ['-c', '" << script << "']\n"
                        << "  env: {API_TOKEN: s3cret-value}\n"
                        << extra << "  resources: {cores: 1, ksps: 10, streams: 1}\n";
    CliRun run = cluster_.RunSnnctlAs(user, {"--tenant", tenant, "submit", file});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }

  v1::JobRecord Job(const std::string& tenant, uint64_t id) {
    auto job = cluster_.Show(id, tenant);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : v1::JobRecord();
  }

  bool WaitForState(const std::string& tenant, uint64_t id, v1::JobState state) {
    return TestCluster::WaitUntil([&] { return Job(tenant, id).state() == state; });
  }

  bool CgroupsOn() {
    return ReadFile(cluster_.dir() + "/node1.log").find("tasks run in their own cgroups") !=
           std::string::npos;
  }

  TestCluster cluster_;
};

TEST_F(IsolationTest, ATaskOfAnotherTenantCannotReachATasksTokenEnvironmentOutputOrProcesses) {
  StartAgent();
  SubmitAs("daemon", "lab-a", "victim", "echo $$; id -u; exec sleep 600");
  // The job is RUNNING once its launch is sent; its task has a pid and paths once the agent
  // answers.
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    const v1::JobRecord job = Job("lab-a", 1);
    return job.tasks_size() == 1 && job.tasks(0).state() == v1::TASK_RUNNING &&
           !job.tasks(0).stdout_path().empty();
  }));
  const v1::JobRecord victim = Job("lab-a", 1);
  const std::string dir =
      std::filesystem::path(victim.tasks(0).stdout_path()).parent_path().string();
  std::string out;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    out = ReadFile(victim.tasks(0).stdout_path());
    return std::count(out.begin(), out.end(), '\n') == 2;
  })) << "stdout: '"
      << out << "' stderr: '" << ReadFile(victim.tasks(0).stderr_path())
      << "' shepherd: " << ReadFile("/proc/" + std::to_string(victim.tasks(0).pid()) + "/wchan")
      << " children: "
      << ReadFile("/proc/" + std::to_string(victim.tasks(0).pid()) + "/task/" +
                  std::to_string(victim.tasks(0).pid()) + "/children")
      << "'\n"
      << cluster_.Snnctl({"show", "1"}, "lab-a").out << ReadFile(cluster_.dir() + "/node1.log");
  std::istringstream lines(out);
  std::string pid, uid;
  lines >> pid >> uid;
  EXPECT_EQ(uid, std::to_string(UidOf("daemon"))) << "the task runs as its submitter";

  // What the agent gives the task is its user's alone; the token is not in its environment.
  struct stat st {};
  ASSERT_EQ(stat((dir + "/gateway_token").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, UidOf("daemon"));
  EXPECT_EQ(st.st_mode & 077, 0u);
  ASSERT_EQ(stat(victim.tasks(0).stdout_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
  ASSERT_EQ(stat((dir + "/task.pb").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 077, 0u);
  // Read while the shell is not in the middle of its exec, when the file reads empty.
  std::string environ;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    environ = ReadFile("/proc/" + pid + "/environ");
    return !environ.empty();
  }));
  EXPECT_NE(environ.find("SNN_GATEWAY_TOKEN_FILE="), std::string::npos);
  EXPECT_EQ(environ.find("SNN_GATEWAY_TOKEN="), std::string::npos);

  // The attacker, in lab-b, as sys: each attempt prints a word only if it worked.
  const std::string tasks = std::filesystem::path(dir).parent_path().string();
  SubmitAs("sys", "lab-b", "thief",
           "id -u; "
           "cat /proc/" +
               pid +
               "/environ >/dev/null 2>&1 && echo ENVIRON; "
               "grep -q sleep /proc/" +
               pid +
               "/cmdline 2>/dev/null && echo CMDLINE; "
               "ls /proc | grep -qx " +
               pid +
               " && echo LISTED; "
               "cat " +
               dir +
               "/gateway_token >/dev/null 2>&1 && echo TOKEN; "
               "cat " +
               dir +
               "/task.pb >/dev/null 2>&1 && echo RECORD; "
               "cat " +
               victim.tasks(0).stdout_path() +
               " >/dev/null 2>&1 && echo STDOUT; "
               "ls " +
               dir +
               "/work >/dev/null 2>&1 && echo WORKDIR; "
               "ls " +
               tasks +
               " >/dev/null 2>&1 && echo LISTING; "
               "kill -0 " +
               pid +
               " 2>/dev/null && echo SIGNAL; "
               "echo done");
  ASSERT_TRUE(WaitForState("lab-b", 1, v1::COMPLETED)) << Job("lab-b", 1).reason();
  const std::string thief = ReadFile(Job("lab-b", 1).tasks(0).stdout_path());
  EXPECT_EQ(thief, std::to_string(UidOf("sys")) + "\ndone\n");
  // Its directory is named as its tenant knows the job (lab-b's job 1 is the master's job 2).
  EXPECT_NE(Job("lab-b", 1).tasks(0).stdout_path().find("/tasks/lab-b.job1.task0.try"),
            std::string::npos)
      << Job("lab-b", 1).tasks(0).stdout_path();
  EXPECT_EQ(Job("lab-a", 1).state(), v1::RUNNING) << "the victim runs on, untouched";
}

// A task starts from a clean environment built like Slurm's, never the agent's: a secret in the
// agent's environment stays there; the task has its own user's identity from the password
// database, the node's PATH, and its job's variables.
TEST_F(IsolationTest, ATaskStartsFromACleanEnvironmentNotTheAgents) {
  setenv("AGENT_ONLY_SECRET", "hunter2", 1);
  StartAgent();
  unsetenv("AGENT_ONLY_SECRET");
  SubmitAs("daemon", "lab-a", "envy", "env; exit 0");
  ASSERT_TRUE(WaitForState("lab-a", 1, v1::COMPLETED)) << Job("lab-a", 1).reason();
  const std::string env = ReadFile(Job("lab-a", 1).tasks(0).stdout_path());
  EXPECT_EQ(env.find("hunter2"), std::string::npos) << env;
  const passwd* pw = getpwnam("daemon");
  ASSERT_NE(pw, nullptr);
  for (const std::string& line :
       {std::string("USER=daemon\n"), std::string("LOGNAME=daemon\n"),
        "HOME=" + std::string(pw->pw_dir) + "\n", "SHELL=" + std::string(pw->pw_shell) + "\n",
        std::string("PATH=/usr/local/bin:/usr/bin:/bin\n"),
        std::string("API_TOKEN=s3cret-value\n")}) {
    EXPECT_NE(("\n" + env).find("\n" + line), std::string::npos) << "no " << line << "in:\n" << env;
  }
}

// The node's memory caps what a job may ask for: the default is not the only limit.
TEST_F(IsolationTest, AJobAskingForMoreMemoryThanTheNodeAllowsDoesNotRun) {
  StartAgent({"--task_memory_max_mb=512"});
  SubmitAs("daemon", "lab-a", "greedy", "echo ran; exit 0", "  memory_mb: 100000\n");
  ASSERT_TRUE(WaitForState("lab-a", 1, v1::FAILED));
  EXPECT_NE(Job("lab-a", 1)
                .reason()
                .find("task.memory_mb is 100000 MiB; node node1 allows a task at most 512 MiB"),
            std::string::npos)
      << Job("lab-a", 1).reason();
  SubmitAs("daemon", "lab-a", "modest", "exit 0", "  memory_mb: 256\n");
  EXPECT_TRUE(WaitForState("lab-a", 2, v1::COMPLETED)) << Job("lab-a", 2).reason();
}

TEST_F(IsolationTest, RootsJobsRunOnlyWhereTheAgentAllowsIt) {
  StartAgent({"--allow_root_tasks=false"});
  ASSERT_TRUE(cluster_.Submit(ShellJob("exit 0"), "lab-a").ok());  // root, an admin
  ASSERT_TRUE(WaitForState("lab-a", 1, v1::FAILED));
  EXPECT_NE(Job("lab-a", 1)
                .reason()
                .find("was submitted by root; node node1 does not run tasks "
                      "as root (start snn-agent with --allow_root_tasks"),
            std::string::npos)
      << Job("lab-a", 1).reason();
  SubmitAs("daemon", "lab-a", "fine", "exit 0");
  EXPECT_TRUE(WaitForState("lab-a", 2, v1::COMPLETED)) << Job("lab-a", 2).reason();
}

TEST_F(IsolationTest, ATaskPastItsMemoryOrProcessLimitIsStoppedWithTheReason) {
  StartAgent();
  if (!CgroupsOn()) GTEST_SKIP() << "no cgroup memory and pids controllers on this machine";
  // 300 MB in a shell variable, against a limit of 64 MiB.
  SubmitAs("daemon", "lab-a", "hungry", "x=$(head -c 300000000 /dev/zero | tr \"\\\\0\" a); exit 0",
           "  memory_mb: 64\n");
  ASSERT_TRUE(WaitForState("lab-a", 1, v1::FAILED));
  EXPECT_NE(Job("lab-a", 1)
                .reason()
                .find("out of memory: the kernel killed it at its limit of "
                      "64 MiB (task.memory_mb)"),
            std::string::npos)
      << Job("lab-a", 1).reason();
  // A child killed at the limit while the command lives on: the reason says so, not only the
  // exit code 137 the command passed on.
  SubmitAs("daemon", "lab-a", "hungry-child",
           "(x=$(head -c 300000000 /dev/zero | tr \"\\\\0\" a)); exit $?", "  memory_mb: 64\n");
  ASSERT_TRUE(WaitForState("lab-a", 2, v1::FAILED));
  EXPECT_NE(Job("lab-a", 2)
                .reason()
                .find("exited with code 137 (out of memory: the kernel killed one of its processes "
                      "at its limit of 64 MiB (task.memory_mb))"),
            std::string::npos)
      << Job("lab-a", 2).reason();
  // Twenty background sleeps against a limit of 8 processes: the ninth fork fails.
  SubmitAs("daemon", "lab-a", "forky",
           "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do sleep 30 & done; "
           "echo all started",
           "  max_processes: 8\n");
  ASSERT_TRUE(WaitForState("lab-a", 3, v1::FAILED)) << Job("lab-a", 3).reason();
  const v1::JobRecord forky = Job("lab-a", 3);
  EXPECT_EQ(ReadFile(forky.tasks(0).stdout_path()), "");
  EXPECT_NE(ReadFile(forky.tasks(0).stderr_path()).find("Cannot fork"), std::string::npos);
}

}  // namespace
}  // namespace snn::testing
