// NIR files: the three real exports read into models with the figures snnctl estimate shows,
// the simulated board runs one, convolution and pooling stages make the synapses worked out by
// hand, and damaged, foreign or unknown-typed files give one-line errors that name the file.
#include "common/model/nir_model.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/model/model.h"
#include "common/model/projection_stages.h"
#include "nodeagent/hal/lif_network.h"
#include "nodeagent/hal/nir_network.h"
#include "snn_paths.h"

namespace snn {
namespace {

std::string Data(const std::string& name) {
  return std::string(SNN_SOURCE_DIR) + "/etc/models/nir/" + name;
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class NirFiles : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string Fifo(const std::string& name) {
    const std::string path = dir_ + "/" + name;
    EXPECT_EQ(mkfifo(path.c_str(), 0600), 0);
    return path;
  }
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("nir_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

struct Expected {
  const char* file;
  double step_ms;
  int populations;
  uint64_t neurons;
  int projections;
  uint64_t synapses;
  const char* input;
  const char* output;
};

TEST(NirModelTest, TheThreeRealExportsGiveTheirLayersAndSynapses) {
  // Worked out from the files: braille 12 -> 38 (fc1), 38 -> 38 (recurrent), 38 -> 7 (fc2);
  // the CNN's convolutions and pooling (h5dump) make 1,122,848 synapses over 11,282 neurons.
  const Expected cases[] = {
      {"lif_rockpool.nir", 1, 2, 2, 1, 1, "input", "1_LIFNeuronTorch"},
      {"braille_noDelay_bias_zero.nir", 0.1, 3, 57, 3, 12 * 38 + 38 * 38 + 38 * 7, "input", "lif2"},
      {"cnn_sinabs.nir", 1, 6, 2 * 34 * 34 + 4096 + 4096 + 512 + 256 + 10, 5, 1122848, "input",
       "12"},
  };
  for (const Expected& c : cases) {
    SCOPED_TRACE(c.file);
    auto model = LoadAnyModelFile(Data(c.file), NirOptions{c.step_ms});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    EXPECT_EQ(model->dynamics(), "nir");
    EXPECT_DOUBLE_EQ(model->timestep_ms(), c.step_ms);
    EXPECT_EQ(model->populations_size(), c.populations);
    EXPECT_EQ(model->projections_size(), c.projections);
    const ModelEstimate e = EstimateModel(*model, 256, 10);
    EXPECT_EQ(e.neurons, c.neurons);
    EXPECT_EQ(static_cast<uint64_t>(e.synapses), c.synapses);
    // Inputs come first, the layers in the order spikes reach them.
    EXPECT_EQ(model->populations(0).name(), c.input);
    EXPECT_EQ(model->populations(0).role(), "input");
    for (const auto& p : model->populations()) {
      EXPECT_EQ(p.role() == "output", p.name() == c.output) << p.name();
    }
  }
}

TEST(NirModelTest, ParametersPerNeuronBiasesAndTheRecurrentLoopAreKept) {
  auto model = LoadNirFile(Data("braille_noDelay_bias_zero.nir"), NirOptions{0.1});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const v1::Projection* loop = nullptr;
  for (const auto& p : model->projections()) {
    if (p.from() == p.to())
      loop = &p;
    else
      EXPECT_EQ(p.delay_steps(), 0u) << p.from() << " -> " << p.to();  // the same step
  }
  ASSERT_NE(loop, nullptr);  // lif1.lif -> lif1.w_rec -> lif1.lif
  EXPECT_EQ(loop->delay_steps(), 1u) << "a loop takes effect the next step";
  const v1::Population& lif1 = model->populations(1);
  ASSERT_EQ(lif1.name(), "lif1.lif");
  EXPECT_EQ(lif1.nir().kind(), "CubaLIF");
  EXPECT_EQ(lif1.nir().tau_syn_size(), 38);
  EXPECT_NEAR(lif1.nir().w_in(0), 2.2222222810910086, 1e-15);
  // fc1's bias and the recurrent Affine's both drive lif1.lif (h5dump: -0.128 + -0.214 for
  // neuron 0); fc2's drives lif2.
  ASSERT_EQ(lif1.nir().bias_size(), 38);
  EXPECT_NE(lif1.nir().bias(0), 0);
  EXPECT_EQ(model->populations(2).nir().bias_size(), 7);
  EXPECT_GT(model->populations(2).nir().bias(0), 0.25);
}

// The reset of spiking layers that give no v_reset (no exported file gives one) is chosen, never
// silent: subtracting the threshold leaves them listed by MissingReset; zero gives each v_reset 0.
TEST(NirModelTest, LayersWithoutVResetResetAsChosenAndAreNamed) {
  NirOptions subtract{0.1};
  auto model = LoadNirFile(Data("braille_noDelay_bias_zero.nir"), subtract);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(MissingReset(*model), (std::vector<std::string>{"lif1.lif", "lif2"}));
  NirOptions zero{0.1, NirReset::kZero};
  auto zeroed = LoadNirFile(Data("braille_noDelay_bias_zero.nir"), zero);
  ASSERT_TRUE(zeroed.ok()) << zeroed.status().ToString();
  EXPECT_TRUE(MissingReset(*zeroed).empty());
  for (const auto& p : zeroed->populations()) {
    if (p.nir().v_threshold_size() == 0) continue;
    ASSERT_EQ(p.nir().v_reset_size(), 1) << p.name();
    EXPECT_EQ(p.nir().v_reset(0), 0) << p.name();
  }
  EXPECT_EQ(ParseNirReset("zero").value(), NirReset::kZero);
  EXPECT_EQ(ParseNirReset("").value(), NirReset::kSubtract);
  EXPECT_FALSE(ParseNirReset("halfway").ok());
}

TEST(NirModelTest, AStepLongerThanATimeConstantIsRefusedNamingIt) {
  // Exported from snnTorch at 0.1 ms: at the default 1 ms forward Euler would overshoot.
  auto model = LoadNirFile(Data("braille_noDelay_bias_zero.nir"));
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("node 'lif1.lif' (CubaLIF): tau_syn 0.000222222 s is "
                                          "shorter than the 1 ms step"),
            std::string::npos)
      << model.status().message();
  EXPECT_NE(model.status().message().find("--dt"), std::string::npos);
}

TEST(NirModelTest, TheSimulatedBoardRunsANirModel) {
  // Rockpool's LIF: r 24.02, tau 2.5 ms, weight 0.04, threshold 0.1. At 1 ms an input spike
  // lifts v by 0.4 x 24.02 x 0.04 = 0.384: a spike in the same step, v - 0.1 = 0.284 left,
  // which decays to 0.170 (a second spike) and then 0.042: two outputs per input, spaced so.
  auto model = LoadNirFile(Data("lif_rockpool.nir"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  SimNetworkLimits limits;
  limits.num_cores = 2;
  limits.neurons_per_core = 16;
  auto net = NirNetwork::Build(*model, limits);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  auto in = (*net)->AddressOf("input", 0);
  ASSERT_TRUE(in.ok());
  std::vector<wire::Spike> spikes;
  for (uint32_t step : {2u, 5u, 9u}) spikes.push_back(wire::Spike{in->core, in->neuron, step});
  (*net)->Inject(spikes.data(), spikes.size());
  (*net)->Step(20);
  std::vector<wire::Spike> out(16);
  out.resize((*net)->ReadOutput(out.data(), out.size()));
  std::vector<uint32_t> steps;
  for (const auto& s : out) steps.push_back(s.step);
  EXPECT_EQ(steps, (std::vector<uint32_t>{2, 3, 5, 6, 9, 10}));
}

v1::Projection Stages(std::vector<v1::Stage> stages) {
  v1::Projection p;
  p.set_from("a");
  p.set_to("b");
  p.set_connectivity("stages");
  for (auto& s : stages) *p.add_stages() = std::move(s);
  return p;
}

v1::Stage Stage(const std::string& kind, std::vector<uint32_t> in, std::vector<uint32_t> out,
                std::vector<float> weights, std::vector<uint32_t> kernel,
                std::vector<uint32_t> stride) {
  v1::Stage s;
  s.set_kind(kind);
  for (uint32_t d : in) s.add_in_shape(d);
  for (uint32_t d : out) s.add_out_shape(d);
  for (float w : weights) s.add_weights(w);
  for (uint32_t k : kernel) s.add_kernel(k);
  for (uint32_t k : stride) s.add_stride(k);
  return s;
}

TEST(ProjectionStagesTest, ConvolutionAndPoolingMakeTheSynapsesWorkedOutByHand) {
  // A 2x2 kernel [1 2; 3 4] over a 3x3 image: the centre pixel feeds all four outputs, through
  // the kernel tap that lands on it (output (0,0) sees it through 4, output (1,1) through 1).
  const v1::Projection conv =
      Stages({Stage("conv", {1, 3, 3}, {1, 2, 2}, {1, 2, 3, 4}, {2, 2}, {})});
  ASSERT_TRUE(CheckStages(conv, 9, 4, "p").ok());
  std::map<std::pair<uint32_t, uint32_t>, float> synapses;
  ForEachStageSynapse(conv, 9, [&](uint32_t s, uint32_t t, float w) { synapses[{s, t}] = w; });
  EXPECT_EQ(synapses.size(), 16u);  // 4 outputs x 4 taps
  EXPECT_EQ((synapses[{4, 0}]), 4);
  EXPECT_EQ((synapses[{4, 1}]), 3);
  EXPECT_EQ((synapses[{4, 2}]), 2);
  EXPECT_EQ((synapses[{4, 3}]), 1);
  EXPECT_EQ((synapses.count({0, 3})), 0u);  // the corner reaches only output (0,0)
  EXPECT_LE(16.0, StageSynapseBound(conv, 9, 4));

  // Sum pooling 2x2 (stride = window) on 4x4, then a dense 4 -> 1 with weights 1,2,3,4: pixel
  // (3,3) lands in pooled cell 3 and reaches the output with weight 4.
  const v1::Projection pooled = Stages({Stage("sum_pool", {1, 4, 4}, {1, 2, 2}, {}, {2, 2}, {}),
                                        Stage("dense", {4}, {1}, {1, 2, 3, 4}, {}, {})});
  ASSERT_TRUE(CheckStages(pooled, 16, 1, "p").ok());
  std::map<uint32_t, float> into;
  ForEachStageSynapse(pooled, 16, [&](uint32_t s, uint32_t, float w) { into[s] = w; });
  EXPECT_EQ(into.size(), 16u);
  EXPECT_EQ(into[15], 4);
  EXPECT_EQ(into[0], 1);
}

TEST(ProjectionStagesTest, ShapesThatDoNotChainAreNamed) {
  auto status = CheckStages(Stages({Stage("conv", {1, 3, 3}, {1, 3, 3}, {1, 2, 3, 4}, {2, 2}, {})}),
                            9, 9, "projection 0");
  EXPECT_NE(status.message().find("make 1x2x2"), std::string::npos) << status.message();
  status = CheckStages(Stages({Stage("dense", {4}, {2}, {1, 2, 3}, {}, {})}), 4, 2, "p");
  EXPECT_NE(status.message().find("needs 8 weights"), std::string::npos) << status.message();
  status =
      CheckStages(Stages({Stage("dense", {4}, {2}, std::vector<float>(8, 1), {}, {})}), 5, 2, "p");
  EXPECT_NE(status.message().find("5 come in"), std::string::npos) << status.message();
  // A pooling window of 4096 x 4096 over a 4096 x 4096 image costs nothing to send and hours to
  // expand: refused before any agent tries.
  status =
      CheckStages(Stages({Stage("sum_pool", {1, 4096, 4096}, {1, 1, 1}, {}, {4096, 4096}, {1, 1})}),
                  4096 * 4096, 1, "p");
  EXPECT_NE(status.message().find("are allowed"), std::string::npos) << status.message();
  status = CheckStages(Stages({Stage("fft", {4}, {4}, {}, {}, {})}), 4, 4, "p");
  EXPECT_NE(status.message().find("unknown stage kind 'fft'"), std::string::npos);
}

TEST_F(NirFiles, DamagedForeignAndUnknownFilesGiveOneLineErrors) {
  const std::string rockpool = Bytes(Data("lif_rockpool.nir"));
  const std::string cnn = Bytes(Data("cnn_sinabs.nir"));
  ASSERT_GT(rockpool.size(), 10000u);
  std::string unknown = rockpool;  // the Linear node's type, renamed to a type nobody knows
  for (size_t at = unknown.find("Linear"); at != std::string::npos;
       at = unknown.find("Linear", at)) {
    unknown.replace(at, 6, "Lineax");
  }
  // The recurrent subgraph's weight node renamed (its link's name is the file's last "w_rec"),
  // so that its edges name a node it no longer has.
  std::string renamed = Bytes(Data("braille_noDelay_bias_zero.nir"));
  const size_t link = renamed.rfind("w_rec");
  ASSERT_NE(link, std::string::npos);
  renamed.replace(link, 5, "w_xec");
  const struct {
    std::string path;
    std::string says;
  } cases[] = {
      {Write("renamed.nir", renamed),
       "an edge of subgraph 'lif1' names 'w_rec', which is not one of its nodes (subgraph 'lif1' "
       "has: lif, w_xec)"},
      {Write("truncated.nir", rockpool.substr(0, 8000)), "damaged or truncated"},
      {Write("cut_early.nir", cnn.substr(0, 3000)), "damaged or truncated"},
      {Write("text.nir", "{\"name\": \"not hdf5\"}\n"), "not a NIR file"},
      {Write("unknown.nir", unknown), "type 'Lineax', which snn cannot run (known: Input"},
      {dir_ + "/missing.nir", "no such file"},
      {Fifo("pipe.nir"), "is not a regular file"},  // never opened: it would block
  };
  for (const auto& c : cases) {
    auto model = LoadAnyModelFile(c.path);
    ASSERT_FALSE(model.ok()) << c.path;
    const std::string& message = model.status().message();
    EXPECT_NE(message.find(c.says), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find(c.path), std::string::npos) << message;  // names the file
  }
  // A JSON model under another name is still read as JSON.
  auto json = LoadAnyModelFile(std::string(SNN_SOURCE_DIR) + "/etc/models/relay.json");
  EXPECT_TRUE(json.ok()) << json.status().ToString();
}

}  // namespace
}  // namespace snn
