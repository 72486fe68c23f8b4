// A job uploaded over HTTP with its model (POST /v1/jobs as multipart/form-data), on real
// daemons: a NIR export runs exactly as the same file submitted with snnctl (same cores, same
// network by its SHA-256 in the results' provenance), a bad file is refused with snnctl's one
// line and submits nothing, and the master's memory is given back after a 48 MiB upload. The
// bounds on uploads (a token, one at a time per user, a size limit): http_wall_test.cc.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "common/base/file_util.h"
#include "common/base/proto_json.h"
#include "snn_paths.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/http_client.h"

namespace snn::testing {
namespace {

constexpr char kPolicy[] = R"(access:
  personal_tenants: false
tenants:
  - name: lab-a
    users: [root]
)";

constexpr char kBoundary[] = "snn-test-boundary-7f3a";

std::string Form(const std::string& job, const std::string& model_name, const std::string& model) {
  const std::string d = std::string("--") + kBoundary;
  return d + "\r\nContent-Disposition: form-data; name=\"job\"\r\nContent-Type: application/yaml" +
         "\r\n\r\n" + job + "\r\n" + d +
         "\r\nContent-Disposition: form-data; name=\"model\"; filename=\"" + model_name +
         "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + model + "\r\n" + d + "--\r\n";
}

// A field of a JSON answer ("model_sha256": "...").
std::string Field(const std::string& json, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + name + "\": *\"?([^\",}]*)"))) return "";
  return m[1];
}

uint64_t RssBytes(pid_t pid) {
  const std::string status = ReadFile("/proc/" + std::to_string(pid) + "/status");
  const size_t at = status.find("VmRSS:");
  return at == std::string::npos ? 0 : std::stoull(status.substr(at + 6)) * 1024;
}

class ModelUploadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "makes a token of root's with MUNGE: needs root";
    port_ = cluster_.StartMasterWithApiAndPolicy(kPolicy);
    ASSERT_NE(port_, 0) << ReadFile(cluster_.dir() + "/master.log");
    cluster_.StartAgent("node1",
                        "boards:\n  - {type: sim-v1, mesh: 8x8, neurons_per_core: 256, "
                        "ksps: 100000, streams: 4}\n");
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
    CliRun token = cluster_.Snnctl({"token", "create", "--parsable"}, "lab-a");
    ASSERT_EQ(token.exit_code, 0) << token.err;
    token_ = token.out.substr(0, token.out.find('\n'));
  }

  HttpResult Upload(const std::string& job, const std::string& model_name, const std::string& model,
                    const std::string& token) {
    HttpCall call{"POST",
                  "/v1/jobs",
                  token,
                  Form(job, model_name, model),
                  {{"Snn-Tenant", "lab-a"},
                   {"Content-Type", std::string("multipart/form-data; boundary=") + kBoundary}}};
    auto result = HttpDo("127.0.0.1", port_, cluster_.auth().ca_file(), call);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : HttpResult{};
  }
  HttpResult Get(const std::string& target) {
    HttpCall call{"GET", target, token_, "", {{"Snn-Tenant", "lab-a"}}};
    auto result = HttpDo("127.0.0.1", port_, cluster_.auth().ca_file(), call);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : HttpResult{};
  }

  // The job's record once it completed (lab-a's job `id`).
  Result<v1::JobRecord> Completed(uint64_t id) {
    Result<v1::JobRecord> job = NotFound("never shown");
    TestCluster::WaitUntil([&] {
      job = cluster_.Show(id, "lab-a");
      return job.ok() && job->state() == v1::COMPLETED;
    });
    return job;
  }

  TestCluster cluster_;
  uint16_t port_ = 0;
  std::string token_;
};

const std::string kNirJob = std::string("name: nir\ntenant: lab-a\ntask:\n  command: ") +
                            SNN_EXAMPLE_NIR_BIN +
                            "\n  args: [--steps, '50']\n  resources:\n    model_step_ms: 0.1\n"
                            "    ksps: 2000\n";

TEST_F(ModelUploadTest, ANirExportUploadedRunsAsTheSameFileSubmittedWithSnnctl) {
  const std::string path =
      std::string(SNN_SOURCE_DIR) + "/etc/models/nir/braille_noDelay_bias_zero.nir";
  const std::string name = "braille_noDelay_bias_zero.nir";  // the model is named after it
  HttpResult up = Upload(kNirJob, name, ReadFile(path), token_);
  ASSERT_EQ(up.status, 200) << up.body;
  EXPECT_EQ(Field(up.body, "tenant_job_id"), "1") << up.body;
  // The file gives no v_reset: the answer says which reset its layers use.
  EXPECT_NE(up.body.find("gives no v_reset"), std::string::npos) << up.body;
  EXPECT_NE(up.body.find(name), std::string::npos) << up.body;
  EXPECT_EQ(up.body.find("snn-upload"), std::string::npos) << up.body;  // not the master's copy

  const std::string job = cluster_.dir() + "/nir.yaml";
  std::ofstream(job) << kNirJob << "    model: " << path << "\n";
  CliRun submit = cluster_.Snnctl({"submit", job}, "lab-a");
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  auto uploaded = Completed(1);
  auto submitted = Completed(2);
  ASSERT_TRUE(uploaded.ok() && uploaded->state() == v1::COMPLETED)
      << cluster_.Snnctl({"show", "1"}, "lab-a").out;
  ASSERT_TRUE(submitted.ok() && submitted->state() == v1::COMPLETED)
      << cluster_.Snnctl({"show", "2"}, "lab-a").out;
  EXPECT_EQ(uploaded->spec().task().resources().cores(), 3u);
  EXPECT_EQ(uploaded->spec().task().resources().cores(),
            submitted->spec().task().resources().cores());
  EXPECT_EQ(uploaded->spec().task().resources().model(), name);
  const std::string a = Get("/v1/jobs/1/results").body, b = Get("/v1/jobs/2/results").body;
  EXPECT_EQ(Field(a, "model_sha256").size(), 64u) << a;
  EXPECT_EQ(Field(a, "model_sha256"), Field(b, "model_sha256")) << a << "\n" << b;
  const std::string out = ReadFile(uploaded->tasks(0).stdout_path());
  EXPECT_NE(out.find("most active output neuron: "), std::string::npos) << out;
}

// POST /v1/models: a model alone, answered as JSON, the network snn-nir-import makes of it.
TEST_F(ModelUploadTest, AModelAloneIsAnsweredAsTheNetworkSnnNirImportMakes) {
  const std::string path =
      std::string(SNN_SOURCE_DIR) + "/etc/models/nir/braille_noDelay_bias_zero.nir";
  const std::string d = std::string("--") + kBoundary;
  const std::string form =
      d + "\r\nContent-Disposition: form-data; name=\"model_step_ms\"\r\n\r\n0.1\r\n" + d +
      "\r\nContent-Disposition: form-data; name=\"model\"; "
      "filename=\"braille_noDelay_bias_zero.nir\""
      "\r\n\r\n" +
      ReadFile(path) + "\r\n" + d + "--\r\n";
  HttpCall call{"POST",
                "/v1/models",
                token_,
                form,
                {{"Content-Type", std::string("multipart/form-data; boundary=") + kBoundary}}};
  auto answer = HttpDo("127.0.0.1", port_, cluster_.auth().ca_file(), call);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(answer->status, 200) << answer->body;
  google::protobuf::Struct body;
  ASSERT_TRUE(FromJson(answer->body, body).ok()) << answer->body;
  v1::Model served;
  ASSERT_TRUE(FromJson(ToJson(body.fields().at("model").struct_value()), served).ok());
  ASSERT_EQ(body.fields().at("notes").list_value().values_size(), 1) << answer->body;
  EXPECT_NE(body.fields().at("notes").list_value().values(0).string_value().find(
                "braille_noDelay_bias_zero.nir gives no v_reset"),
            std::string::npos)
      << answer->body;
  const std::string helper_out = cluster_.dir() + "/helper.bin";
  ASSERT_EQ(std::system((std::string(SNN_NIR_IMPORT_BIN) + " --binary --dt=0.1 " + path + " > " +
                         helper_out + " 2>/dev/null")
                            .c_str()),
            0);
  v1::Model helper;
  ASSERT_TRUE(helper.ParseFromString(ReadFile(helper_out)));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(served, helper));
  EXPECT_EQ(served.name(), "braille_noDelay_bias_zero");
  // Not a form: one line saying what it takes.
  auto plain = HttpDo("127.0.0.1", port_, cluster_.auth().ca_file(),
                      {"POST", "/v1/models", token_, "{}", {{"Content-Type", "application/json"}}});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->status, 400);
  EXPECT_NE(plain->body.find("POST /v1/models takes a form upload"), std::string::npos);
}

TEST_F(ModelUploadTest, ABadModelIsRefusedWithSnnctlsLineAndSubmitsNothing) {
  HttpResult up = Upload(kNirJob, "bad.nir", "not hdf5\n", token_);
  EXPECT_EQ(up.status, 400) << up.body;
  EXPECT_EQ(up.body,
            "{\"error\": \"bad.nir: not a NIR file (NIR files are HDF5; this one is not, or is cut "
            "short)\", \"code\": \"INVALID_ARGUMENT\"}\n");
  // A real export cut short: the helper's line, naming the upload.
  const std::string path = std::string(SNN_SOURCE_DIR) + "/etc/models/nir/lif_rockpool.nir";
  up = Upload(kNirJob, "cut.nir", ReadFile(path).substr(0, 3000), token_);
  EXPECT_EQ(up.status, 400) << up.body;
  EXPECT_NE(up.body.find("cut.nir"), std::string::npos) << up.body;
  EXPECT_EQ(up.body.find("snn-upload"), std::string::npos) << up.body;
  // A JSON model with a NIR-only field; a form without its model; a job naming another model.
  up = Upload(kNirJob, "chain.json",
              ReadFile(std::string(SNN_SOURCE_DIR) + "/etc/models/chain.json"), token_);
  EXPECT_EQ(up.status, 400) << up.body;
  EXPECT_NE(up.body.find("model_step_ms is for NIR models; chain.json is not one"),
            std::string::npos)
      << up.body;
  up = Upload(kNirJob + "    model: other.nir\n", "braille.nir", "x", token_);
  EXPECT_NE(up.body.find("the job names model other.nir but the upload's model is braille.nir"),
            std::string::npos)
      << up.body;
  EXPECT_EQ(Get("/v1/jobs").body.find("\"id\""), std::string::npos);  // nothing was submitted
}

TEST_F(ModelUploadTest, AJsonModelRunsAndA48MiBUploadIsGivenBack) {
  const std::string json_job =
      "name: chain\ntenant: lab-a\ntask:\n  command: /bin/true\n  resources:\n    ksps: 10\n";
  HttpResult up = Upload(json_job, "chain.json",
                         ReadFile(std::string(SNN_SOURCE_DIR) + "/etc/models/chain.json"), token_);
  ASSERT_EQ(up.status, 200) << up.body;
  auto shown = Completed(1);
  ASSERT_TRUE(shown.ok() && shown->state() == v1::COMPLETED)
      << cluster_.Snnctl({"show", "1"}, "lab-a").out;
  EXPECT_GT(shown->spec().task().resources().cores(), 0u);
  EXPECT_EQ(shown->spec().task().resources().model(), "chain.json");
  // The tenant in the address instead of Snn-Tenant, as on every route; nothing else there.
  const std::string form = Form(json_job, "chain.json",
                                ReadFile(std::string(SNN_SOURCE_DIR) + "/etc/models/chain.json"));
  const std::string type = std::string("multipart/form-data; boundary=") + kBoundary;
  auto in_query = HttpDo("127.0.0.1", port_, cluster_.auth().ca_file(),
                         {"POST", "/v1/jobs?tenant=lab-a", token_, form, {{"Content-Type", type}}});
  ASSERT_TRUE(in_query.ok());
  EXPECT_EQ(in_query->status, 200) << in_query->body;
  auto odd = HttpDo("127.0.0.1", port_, cluster_.auth().ca_file(),
                    {"POST", "/v1/jobs?hold=true", token_, form, {{"Content-Type", type}}});
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->status, 400) << odd->body;
  EXPECT_NE(odd->body.find("unknown parameter 'hold'"), std::string::npos) << odd->body;

  // The bounds on uploads (a token, one at a time, the size): http_wall_test.cc.
  // 48 MiB of a file that starts as HDF5: read, refused by the helper, and the master's memory
  // given back once answered.
  const pid_t master = cluster_.master_pid();
  const uint64_t before = RssBytes(master);
  std::string fake("\x89HDF\r\n\x1a\n", 8);
  fake.resize(48 << 20, '\0');
  up = Upload(kNirJob, "big.nir", fake, token_);
  EXPECT_EQ(up.status, 400) << up.body;
  EXPECT_NE(up.body.find("big.nir"), std::string::npos) << up.body;
  const uint64_t after = RssBytes(master);
  EXPECT_LT(after, before + (16 << 20)) << before << " -> " << after;
}

}  // namespace
}  // namespace snn::testing
