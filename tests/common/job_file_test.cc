#include "common/daemon/job_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "cli/format.h"
#include "common/base/base64.h"
#include "common/base/file_util.h"
#include "common/base/job_validation.h"
#include "snn_paths.h"

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

TEST(JobFileTest, AModelsResetIsSubtractOrZeroAndOnlyWithAModel) {
  auto spec = ParseJobYaml(
      "task: {command: /bin/true, resources: {model: net.nir, model_reset: zero, ksps: 1}}", "job");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->task().resources().model_reset(), "zero");
  auto bad = ParseJobYaml(
      "task: {command: /bin/true, resources: {model: net.nir, model_reset: half, ksps: 1}}", "job");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("model_reset is subtract or zero"), std::string::npos)
      << bad.status().message();
  auto alone = ParseJobYaml(
      "task: {command: /bin/true, resources: {cores: 1, model_reset: zero, ksps: 1}}", "job");
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("model_reset is about a model"), std::string::npos)
      << alone.status().message();
}

TEST(JobFileTest, NormalizedUnitsInsteadOfKsps) {
  auto spec = ParseJobYaml(
      "task: {command: /bin/true, resources: {cores: 2, units: 1.5, board_type: any}}", "job");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_DOUBLE_EQ(spec->task().resources().units(), 1.5);
  EXPECT_EQ(spec->task().resources().ksps(), 0u);  // the master sets it from the unit
  EXPECT_TRUE(ValidateJobSpec(*spec).ok());
  for (const char* bad : {"{cores: 1, units: 1, ksps: 10}", "{cores: 1, units: 0}",
                          "{cores: 1, units: -2}", "{cores: 1, units: many}", "{cores: 1}"}) {
    auto refused = ParseJobYaml(std::string("task: {command: x, resources: ") + bad + "}", "j");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find("task.resources"), std::string::npos)
        << refused.status().message();
  }
}

TEST(JobFileTest, AGangSaysHowItsReplicasAreSpread) {
  auto spec = ParseJobYaml(
      "replicas: {min: 2, max: 4, spread: spread}\n"
      "task: {command: /bin/true, resources: {cores: 2, ksps: 10}}",
      "job");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->spread(), "spread");
  EXPECT_TRUE(ValidateJobSpec(*spec).ok());
  auto odd = ParseJobYaml(
      "replicas: {min: 2, spread: scatter}\ntask: {command: x, resources: {cores: 1, ksps: 1}}",
      "job");
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("replicas.spread is 'scatter'; use pack"),
            std::string::npos)
      << odd.status().message();
}

TEST(JobFileTest, AScheduleIsCheckedBeforeSubmit) {
  auto spec = ParseJobYaml(
      "schedule: \"0 3 * * *\"\ntask: {command: /bin/true, resources: {cores: 1, ksps: 1}}", "job");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->schedule(), "0 3 * * *");
  auto bad = ParseJobYaml(
      "schedule: \"0 25 * * *\"\ntask: {command: /bin/true, resources: {cores: 1, ksps: 1}}",
      "job");
  EXPECT_EQ(bad.status().message(),
            "schedule '0 25 * * *': its hour field '25' is not *, N, A-B or either /STEP, from 0 "
            "to 23");
}

TEST(JobFileTest, DependsListsJobIdsByKind) {
  auto spec = ParseJobYaml(
      "depends: {after_ok: [1, 7], after_any: [2], after_not_ok: [3, 4], after_corr: [5]}\n"
      "task: {command: /bin/true, resources: {cores: 1, ksps: 1}}",
      "job");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_EQ(spec->after_corr_size(), 1);
  EXPECT_EQ(spec->after_corr(0), 5u);
  ASSERT_EQ(spec->after_ok_size(), 2);
  EXPECT_EQ(spec->after_ok(1), 7u);
  ASSERT_EQ(spec->after_any_size(), 1);
  EXPECT_EQ(spec->after_any(0), 2u);
  ASSERT_EQ(spec->after_not_ok_size(), 2);
  EXPECT_EQ(spec->after_not_ok(1), 4u);
  EXPECT_FALSE(spec->singleton());
  auto single = ParseJobYaml(
      "depends: {singleton: true}\ntask: {command: /bin/true, resources: {cores: 1, ksps: 1}}",
      "job");
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  EXPECT_TRUE(single->singleton());
  std::string many = "depends: {after_ok: [";
  for (int i = 1; i <= 40; ++i) many += std::to_string(i) + (i < 40 ? ", " : "], after_any: [");
  for (int i = 41; i <= 65; ++i) many += std::to_string(i) + (i < 65 ? ", " : "]}");
  for (const std::string& bad :
       {std::string("depends: {after_ok: [0]}"), std::string("depends: {after_ok: 3}"),
        std::string("depends: {after_all: [1]}"), std::string("depends: {after_ok: [x]}"),
        std::string("depends: {after_not_ok: [-1]}"), std::string("depends: {}"),
        std::string("depends: 5"), std::string("depends: {singleton: yes please}"), many}) {
    auto r =
        ParseJobYaml(bad + "\ntask: {command: /bin/true, resources: {cores: 1, ksps: 1}}", "job");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("depends"), std::string::npos) << r.status().message();
  }
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
      {"task: {command: x, files: [a], resources: {cores: 1, ksps: 1}}",
       "task.files must be a mapping"},
      {"task: {command: x, files: {a: {base64: '!!'}}, resources: {cores: 1, ksps: 1}}",
       "task.files.a.base64 is not base64"},
      {"task: {command: x, files: {a: {hex: '00'}}, resources: {cores: 1, ksps: 1}}",
       "unknown field 'hex'"},
      {"task: {command: x, files: {../x: y}, resources: {cores: 1, ksps: 1}}",
       "task.files has the name '../x'"},
      {"task: {command: x, files: {.bashrc: y}, resources: {cores: 1, ksps: 1}}",
       "not starting with '.'"},
      {"task: {command: x, files: {a/b: y}, resources: {cores: 1, ksps: 1}}", "no directories"},
      {"task: {command: x, workdir: /tmp, files: {a: y}, resources: {cores: 1, ksps: 1}}",
       "leave task.workdir unset"},
  };
  for (const auto& c : cases) {
    auto spec = ParseJobYaml(c.yaml, "j");
    ASSERT_FALSE(spec.ok()) << c.yaml;
    EXPECT_NE(spec.status().message().find(c.expect), std::string::npos)
        << c.yaml << "\n  -> " << spec.status().message();
  }
}

TEST(JobFileTest, FilesAreTextOrBase64AndBounded) {
  auto spec = ParseJobYaml(R"(
task:
  command: python3
  args: [run.py]
  files:
    run.py: "print('hi')\n"
    table.bin: {base64: "AAEC/w=="}
  resources: {cores: 1, ksps: 1}
)",
                           "j");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->task().files().at("run.py"), "print('hi')\n");
  EXPECT_EQ(spec->task().files().at("table.bin"), std::string("\x00\x01\x02\xff", 4));
  // Too many, or too large in all: refused with the bound.
  std::string many = "task:\n  command: x\n  resources: {cores: 1, ksps: 1}\n  files:\n";
  for (int i = 0; i < 65; ++i) many += "    f" + std::to_string(i) + ": x\n";
  EXPECT_NE(ParseJobYaml(many, "j").status().message().find("at most 64"), std::string::npos);
  const std::string big(200 << 10, 'x');
  const std::string large =
      "task:\n  command: x\n  resources: {cores: 1, ksps: 1}\n  files:\n"
      "    a: " +
      big + "\n    b: " + big + "\n";
  EXPECT_NE(ParseJobYaml(large, "j").status().message().find("at most 262144"), std::string::npos)
      << ParseJobYaml(large, "j").status().message();
}

TEST(Base64Test, DecodesWhatItEncodesAndRefusesAnythingElse) {
  for (const std::string& bytes :
       {std::string(), std::string("f"), std::string("fo"), std::string("foo"), std::string("foob"),
        std::string("\0\xff\x10 binary", 10)}) {
    auto back = DecodeBase64(EncodeBase64(bytes));
    ASSERT_TRUE(back.has_value()) << EncodeBase64(bytes);
    EXPECT_EQ(*back, bytes);
  }
  EXPECT_EQ(EncodeBase64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(EncodeBase64("fo"), "Zm8=");
  EXPECT_EQ(*DecodeBase64("Zm9v\nYmFy"), "foobar");  // line breaks are skipped
  for (const char* bad : {"Zm9", "Zm9v!mFy", "Zm8==", "Zm9=", "=Zm9", "Zm=v"}) {
    EXPECT_FALSE(DecodeBase64(bad).has_value()) << bad;
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

namespace snn {
namespace {

// Bad input the parser used to accept silently, or explained badly.
TEST(JobFileHardeningTest, AmbiguousOrHostileFilesAreRefusedWithTheRule) {
  const std::string base = "task:\n  command: /bin/true\n  resources: {cores: 1}\n";
  auto twice = ParseJobYaml("name: a\nname: b\n" + base, "x");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("the key 'name' twice"), std::string::npos)
      << twice.status().message();
  auto two_docs = ParseJobYaml("name: a\n" + base + "---\nname: b\n" + base, "x");
  ASSERT_FALSE(two_docs.ok());
  EXPECT_NE(two_docs.status().message().find("2 YAML documents"), std::string::npos);
  auto wraps = ParseJobYaml("time_limit: \"307445734561825861:00\"\n" + base, "x");
  EXPECT_FALSE(wraps.ok()) << "a time limit that wraps became " << wraps->time_limit_s() << " s";
  auto control = ParseJobYaml("name: \"ok\\n42 forged-row RUNNING\"\n" + base, "x");
  if (control.ok()) {
    EXPECT_FALSE(ValidateJobSpec(*control).ok()) << "a name with a newline was accepted";
  }
  auto binary = ParseJobYaml(std::string("name: \xff\xfe\n") + base, "x");
  ASSERT_FALSE(binary.ok());
  EXPECT_NE(binary.status().message().find("not UTF-8"), std::string::npos);
  auto deep = ParseJobYaml("name: " + std::string(5000, '[') + std::string(5000, ']') + "\n", "x");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("deeper than 32"), std::string::npos);
  // yaml-cpp 0.7's LoadAll loops forever, allocating, on a lone comma (found by the fuzzer).
  auto comma = ParseJobYaml(",", "x");
  ASSERT_FALSE(comma.ok());
  EXPECT_EQ(comma.status().message(), "the job file is not valid YAML (line 1)");
  auto three = ParseJobYaml("a: 1\n---\nb: 2\n---\nc: 3\n", "x");
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.status().message().find("YAML documents; give one"), std::string::npos);
}

// YAML allows UTF-16 with a byte order mark, and a UTF-8 one: such files read as their UTF-8
// twin. UTF-32 and broken UTF-16 are one line saying what is wrong.
TEST(JobFileHardeningTest, Utf16AndByteOrderMarksReadLikeUtf8) {
  const std::string utf8 =
      "name: caf\xc3\xa9 \xf0\x9f\xa7\xa0\ntask: {command: /bin/true, resources: "
      "{cores: 1, ksps: 1}}\n";
  auto plain = ParseJobYaml(utf8, "x");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  auto with_bom = ParseJobYaml("\xEF\xBB\xBF" + utf8, "x");
  ASSERT_TRUE(with_bom.ok()) << with_bom.status().message();
  EXPECT_EQ(with_bom->name(), plain->name());
  // The same text as UTF-16 code units, little and big endian (U+1F9E0 is a surrogate pair).
  const std::u16string units =
      u"name: caf\u00e9 \U0001F9E0\ntask: {command: /bin/true, resources: "
      u"{cores: 1, ksps: 1}}\n";
  for (bool little : {true, false}) {
    std::string bytes = little ? "\xFF\xFE" : "\xFE\xFF";
    for (char16_t u : units) {
      const char lo = static_cast<char>(u & 0xFF), hi = static_cast<char>(u >> 8);
      bytes += little ? std::string{lo, hi} : std::string{hi, lo};
    }
    auto spec = ParseJobYaml(bytes, "x");
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    EXPECT_EQ(spec->name(), plain->name());
    EXPECT_EQ(spec->task().command(), "/bin/true");
    auto cut = ParseJobYaml(bytes.substr(0, bytes.size() - 1), "x");
    ASSERT_FALSE(cut.ok());
    EXPECT_NE(cut.status().message().find("odd length"), std::string::npos);
  }
  auto lone = ParseJobYaml(std::string("\xFF\xFEn\0\x00\xD8"
                                       "a\0",
                                       8),
                           "x");
  ASSERT_FALSE(lone.ok());
  EXPECT_NE(lone.status().message().find("unpaired surrogate"), std::string::npos);
  auto utf32 = ParseJobYaml(std::string("\xFF\xFE\0\0n\0\0\0", 8), "x");
  ASSERT_FALSE(utf32.ok());
  EXPECT_EQ(utf32.status().message(), "the job file is UTF-32 text; save it as UTF-8");
}

// Aliases refer to a value instead of copying it; nine levels that each refer to the one below
// ten times stand for 10^9 values. Walking them all took minutes: the expanded size is bounded.
TEST(JobFileHardeningTest, AnAliasBombIsRefusedNotExpanded) {
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", " : "") + prev;
    bomb += "]\n";
  }
  auto spec = ParseJobYaml(bomb, "x");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            "the job file holds more than 1000000 values once its aliases (*name) are expanded");
  // An alias or two, as people use them, is fine.
  auto few = ParseJobYaml(
      "name: &n demo\ntask: {command: /bin/echo, args: [*n, *n], resources: {cores: 1, ksps: 1}}\n",
      "x");
  ASSERT_TRUE(few.ok()) << few.status().message();
  EXPECT_EQ(few->task().args(1), "demo");
}

TEST(JobFileHardeningTest, TablesShowControlCharactersAsQuestionMarks) {
  const std::string table = FormatTable({{"NAME"}, {"a\nb\x1b[2J"}});
  EXPECT_EQ(table, "NAME\na?b?[2J\n");
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

TEST(JobFileHardeningTest, DevicesAndFifosAreRefusedNotRead) {
  for (const std::string path : {"/dev/zero", "/dev/stdin"}) {
    auto model = ReadWholeFile(path, "the model file");
    ASSERT_FALSE(model.ok()) << path;
    EXPECT_NE(model.status().message().find("not a regular file"), std::string::npos);
  }
  const std::string fifo = ::testing::TempDir() + "/snn_fifo_test";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto job = LoadJobFile(fifo);  // would block forever in open() or read()
  ::unlink(fifo.c_str());
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

TEST(JobFileHardeningTest, AnOversizedJobIsOneClearLineBeforeAnythingIsSent) {
  const std::string yaml =
      "task:\n  command: /bin/true\n  env: {BLOB: " + std::string(600 << 10, 'x') +
      "}\n  resources: {cores: 1, ksps: 10, streams: 1}\n";
  auto spec = ParseJobYaml(yaml, "big");  // snnctl reads the file with this
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("at most 524288"), std::string::npos)
      << spec.status().message();
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

TEST(JobFileKindTest, SessionsServicesAndStepsAreWrittenInTheJobFile) {
  auto session =
      ParseJobYaml("kind: session\nkeepalive: 5m\ntask:\n  resources: {cores: 4, ksps: 10}\n", "s");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(session->kind(), v1::SESSION);
  EXPECT_EQ(session->keepalive_s(), 300u);
  EXPECT_TRUE(session->task().command().empty());

  auto service = ParseJobYaml(
      "kind: service\nservice: {period_ms: 5, tenants: [lab-b, lab-c]}\n"
      "task:\n  resources: {cores: 4, ksps: 10}\n",
      "q");
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  EXPECT_EQ(service->kind(), v1::SERVICE);
  EXPECT_EQ(service->service().period_ms(), 5u);
  EXPECT_EQ(service->service().tenants_size(), 2);

  // A step runs a command on its session's resources: it names no resources of its own.
  auto step = ParseJobYaml("kind: step\nalloc: 6\ntask:\n  command: /bin/true\n", "st");
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(step->kind(), v1::STEP);
  EXPECT_EQ(step->alloc(), 6u);

  EXPECT_EQ(ParseJobYaml("kind: gang\ntask:\n  command: x\n  resources: {cores: 1, ksps: 1}\n", "g")
                .status()
                .message(),
            "kind 'gang' is not batch, session, step or service");
  EXPECT_EQ(ParseJobYaml("task:\n  resources: {cores: 1, ksps: 1}\n", "b").status().message(),
            "task.command is required");
  EXPECT_EQ(ParseJobYaml("kind: service\nservice: {period_ms: 0}\ntask:\n  resources: {cores: "
                         "1, ksps: 1}\n",
                         "z")
                .status()
                .message()
                .find("service.period_ms"),
            0u);
  EXPECT_EQ(ParseJobYaml("kind: service\nservice: {turn: 5}\ntask:\n  resources: {cores: 1, "
                         "ksps: 1}\n",
                         "z")
                .status()
                .message()
                .find("service has an unknown field 'turn'"),
            0u);
}

}  // namespace
}  // namespace snn
