#include "common/model/nir_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "common/model/model.h"
#include "common/model/nir_graph.h"
#include "common/model/nir_operators.h"
#include "common/model/projection_stages.h"

namespace snn {
namespace {

constexpr size_t kMaxPaths = 10'000;   // projections (paths between layers)
constexpr int kMaxOperatorChain = 64;  // operators between two layers
constexpr uint64_t kMaxWalkSteps = 1'000'000;
constexpr uint32_t kMaxDelaySteps = 65'536;

const std::set<std::string>& NeuronTypes() {
  static const std::set<std::string> t = {"LIF", "CubaLIF", "CubaLI",     "IF",
                                          "LI",  "I",       "Integrator", "Threshold"};
  return t;
}
const std::set<std::string>& OperatorTypes() {
  static const std::set<std::string> t = {"Affine",  "Linear",    "Scale",      "Conv1d",
                                          "Conv2d",  "SumPool2d", "SumPooling", "AvgPool2d",
                                          "Flatten", "Delay"};
  return t;
}

std::string KnownTypes() {
  std::string s = "Input, Output";
  for (const auto& t : NeuronTypes()) s += ", " + t;
  for (const auto& t : OperatorTypes()) s += ", " + t;
  return s;
}

// The NIR node types' parameters as v1::NirNeuron keeps them: (dataset, field, required).
struct ParamSpec {
  const char* dataset;
  google::protobuf::RepeatedField<double>* (*field)(v1::NirNeuron&);
  bool required;
};

#define SNN_NIR_FIELD(name) [](v1::NirNeuron& n) { return n.mutable_##name(); }

std::vector<ParamSpec> ParamsOf(const std::string& type) {
  if (type == "LIF" || type == "LI") {
    std::vector<ParamSpec> p = {{"tau", SNN_NIR_FIELD(tau), true},
                                {"r", SNN_NIR_FIELD(r), false},
                                {"v_leak", SNN_NIR_FIELD(v_leak), false}};
    if (type == "LIF") {
      p.push_back({"v_threshold", SNN_NIR_FIELD(v_threshold), true});
      p.push_back({"v_reset", SNN_NIR_FIELD(v_reset), false});
    }
    return p;
  }
  if (type == "CubaLIF" || type == "CubaLI") {
    std::vector<ParamSpec> p = {{"tau_mem", SNN_NIR_FIELD(tau), true},
                                {"tau_syn", SNN_NIR_FIELD(tau_syn), true},
                                {"r", SNN_NIR_FIELD(r), false},
                                {"w_in", SNN_NIR_FIELD(w_in), false},
                                {"v_leak", SNN_NIR_FIELD(v_leak), false}};
    if (type == "CubaLIF") {
      p.push_back({"v_threshold", SNN_NIR_FIELD(v_threshold), true});
      p.push_back({"v_reset", SNN_NIR_FIELD(v_reset), false});
    }
    return p;
  }
  if (type == "IF") {
    return {{"r", SNN_NIR_FIELD(r), false},
            {"v_threshold", SNN_NIR_FIELD(v_threshold), true},
            {"v_reset", SNN_NIR_FIELD(v_reset), false}};
  }
  if (type == "I" || type == "Integrator") return {{"r", SNN_NIR_FIELD(r), false}};
  if (type == "Threshold") return {{"threshold", SNN_NIR_FIELD(v_threshold), true}};
  return {};
}

#undef SNN_NIR_FIELD

class Translator {
 public:
  Translator(std::string path, NirGraph graph, NirOptions options)
      : path_(std::move(path)), graph_(std::move(graph)), options_(options) {}
  Result<v1::Model> Run();

 private:
  Status Error(const std::string& what) const { return InvalidArgument(path_ + ": " + what); }
  const NirArray* Param(const NirNode& n, const std::string& name) const {
    auto it = n.numbers.find(name);
    return it == n.numbers.end() ? nullptr : &it->second;
  }
  Result<const NirArray*> Need(const NirNode& n, const std::string& name) const {
    const NirArray* a = Param(n, name);
    if (a == nullptr || a->values.empty()) {
      return Error("node '" + n.name + "' (" + n.type + ") has no '" + name + "'");
    }
    return a;
  }
  void Order();
  Result<std::vector<uint32_t>> LayerShape(const NirNode& n) const;
  Status AddPopulation(const NirNode& n);
  Status CheckTimeConstants(const NirNode& n, const v1::NirNeuron& nir) const;
  Status AddOperator(const NirNode& n, std::vector<uint32_t>& shape, v1::Projection& p);
  Status Walk(const std::string& from, const std::string& at, std::vector<uint32_t> shape,
              v1::Projection chain, int depth);
  // `at`: the node the path reaches `target` from (the source layer, or an operator).
  Status Emit(const std::string& at, const std::string& target, v1::Projection p,
              const std::vector<uint32_t>& shape);
  Status AddBiases();
  Status CountStep(const std::string& at, int depth);
  Status CarryBias(const std::string& at, const std::vector<double>& value, int depth);

  std::string path_;
  NirGraph graph_;
  NirOptions options_;
  std::multimap<std::string, std::string> out_edges_;
  std::vector<std::string> order_;                            // a topological order, loops cut
  std::set<std::pair<std::string, std::string>> back_edges_;  // the edges that close loops
  std::map<std::string, std::vector<uint32_t>> layer_shape_;  // populations by node name
  std::map<std::string, int> population_;
  std::map<std::string, std::vector<v1::Stage>> operator_stages_;  // as first walked
  std::map<std::string, std::vector<double>> operator_bias_;       // in its output's shape
  v1::Model model_;
  std::vector<std::string> direct_outputs_;   // layers an Output takes as they are
  std::vector<v1::Projection> into_outputs_;  // operator paths into an Output
  uint64_t walk_steps_ = 0;
};

// Depth-first from the top-level Inputs (then any node not reached), names in order: an edge to
// a node still on the walk's path closes a loop; the reverse of the order nodes finish in is a
// topological order of the rest.
void Translator::Order() {
  std::map<std::string, int> state;  // 1: on the path, 2: finished
  std::vector<std::string> finished;
  auto visit = [&](const std::string& root) {
    if (state[root] != 0) return;
    std::vector<std::pair<std::string, std::multimap<std::string, std::string>::iterator>> path;
    state[root] = 1;
    path.emplace_back(root, out_edges_.lower_bound(root));
    while (!path.empty()) {
      auto& [node, next] = path.back();
      if (next == out_edges_.end() || next->first != node) {
        state[node] = 2;
        finished.push_back(node);
        path.pop_back();
        continue;
      }
      const std::string target = (next++)->second;
      if (state[target] == 1) {
        back_edges_.emplace(node, target);
      } else if (state[target] == 0) {
        state[target] = 1;
        path.emplace_back(target, out_edges_.lower_bound(target));
      }
    }
  };
  for (const auto& [name, n] : graph_.nodes) {
    if (n.type == "Input" && n.top_level) visit(name);
  }
  for (const auto& [name, n] : graph_.nodes) visit(name);
  order_.assign(finished.rbegin(), finished.rend());
}

Result<std::vector<uint32_t>> Translator::LayerShape(const NirNode& n) const {
  if (n.type == "Input" || n.type == "Output") {
    for (const char* key :
         {"shape", "input_type/input", "output_type/output", "input_type", "output_type"}) {
      const NirArray* a = Param(n, key);
      if (a != nullptr && !a->values.empty()) {
        std::vector<uint32_t> s;
        for (double v : a->values) {
          if (!(v >= 1 && v <= 1e8)) {
            return Error("node '" + n.name + "' has shape entry " + std::to_string(v));
          }
          s.push_back(static_cast<uint32_t>(v));
        }
        return s;
      }
    }
    return Error("node '" + n.name + "' (" + n.type + ") has no shape");
  }
  for (const char* key : {"tau", "tau_mem", "r", "v_threshold", "threshold"}) {
    if (const NirArray* a = Param(n, key)) return Shape(a->dims);
  }
  return Error("node '" + n.name + "' (" + n.type + ") has none of tau, r, v_threshold");
}

Status Translator::CheckTimeConstants(const NirNode& n, const v1::NirNeuron& nir) const {
  const double step_s = options_.step_ms / 1000;
  const std::pair<const char*, const google::protobuf::RepeatedField<double>*> constants[] = {
      {n.type.rfind("Cuba", 0) == 0 ? "tau_mem" : "tau", &nir.tau()}, {"tau_syn", &nir.tau_syn()}};
  for (const auto& [name, taus] : constants) {
    for (double tau : *taus) {
      if (!(tau > 0) || !std::isfinite(tau)) {
        return Error("node '" + n.name + "' (" + n.type + "): a time constant is " + Number(tau) +
                     "; it must be a positive number of seconds");
      }
      // Exports compute tau from the step in single precision (snnTorch: dt / (1 - beta)):
      // a tau a rounding below the step is the step.
      if (step_s / tau > 1 + 1e-6) {
        return Error("node '" + n.name + "' (" + n.type + "): " + name + " " + Number(tau) +
                     " s is shorter than the " + Number(options_.step_ms) +
                     " ms step, which forward Euler cannot follow; give the step the network "
                     "was trained with (--dt MS, or model_step_ms: in the job file)");
      }
    }
  }
  return Status::Ok();
}

Status Translator::AddPopulation(const NirNode& n) {
  auto shape = LayerShape(n);
  if (!shape.ok()) return shape.status();
  const uint64_t size = Count(*shape);
  v1::Population& p = *model_.add_populations();
  p.set_name(n.name);
  p.set_size(static_cast<int64_t>(size));
  if (n.type == "Input") p.set_role("input");
  v1::NirNeuron& nir = *p.mutable_nir();
  nir.set_kind(n.type == "Integrator" ? "I" : n.type);
  for (const ParamSpec& spec : ParamsOf(n.type)) {
    const NirArray* a = Param(n, spec.dataset);
    if (a == nullptr || a->values.empty()) {
      if (spec.required) return Need(n, spec.dataset).status();
      continue;
    }
    if (a->values.size() != 1 && a->values.size() != size) {
      return Error("node '" + n.name + "' (" + n.type + "): '" + spec.dataset + "' has " +
                   std::to_string(a->values.size()) + " values for a layer of " +
                   std::to_string(size) + " (" + ShapeText(*shape) + ")");
    }
    for (double v : a->values) {
      if (!std::isfinite(v)) {
        return Error("node '" + n.name + "' (" + n.type + "): '" + spec.dataset +
                     "' holds a value that is not a finite number");
      }
    }
    spec.field(nir)->Add(a->values.begin(), a->values.end());
  }
  // A spiking layer without v_reset: the convention the caller chose (see NirOptions).
  if (nir.v_threshold_size() > 0 && nir.v_reset_size() == 0 && nir.kind() != "Threshold" &&
      options_.reset == NirReset::kZero) {
    nir.add_v_reset(0);
  }
  SNN_RETURN_IF_ERROR(CheckTimeConstants(n, nir));
  population_[n.name] = model_.populations_size() - 1;
  layer_shape_[n.name] = *shape;
  return Status::Ok();
}

// Appends node `n`'s operator to the chain `p`, whose elements have `shape` so far.
Status Translator::AddOperator(const NirNode& n, std::vector<uint32_t>& shape, v1::Projection& p) {
  const std::string who = "node '" + n.name + "' (" + n.type + ")";
  const int first_stage = p.stages_size();
  std::vector<double> bias;  // the node's own, in its output's shape
  SNN_RETURN_IF_ERROR(AppendOperator(n, options_.step_ms, path_, shape, p, &bias));
  if (!operator_stages_.count(n.name)) {
    operator_stages_[n.name].assign(p.stages().begin() + first_stage, p.stages().end());
    if (std::any_of(bias.begin(), bias.end(), [](double b) { return b != 0; })) {
      for (double b : bias) {
        if (!std::isfinite(b)) return Error(who + ": its bias is not finite");
      }
      operator_bias_[n.name] = std::move(bias);
    }
  } else {
    // A node reached on two paths must get the same shape on both.
    const v1::Stage& last = operator_stages_[n.name].back();
    if (Count(shape) !=
        Count(std::vector<uint32_t>(last.out_shape().begin(), last.out_shape().end()))) {
      return Error(who + " is reached by paths that give it different shapes");
    }
  }
  return Status::Ok();
}

Status Translator::Emit(const std::string& at, const std::string& target, v1::Projection p,
                        const std::vector<uint32_t>& shape) {
  const uint64_t size = Count(layer_shape_.at(target));
  if (Count(shape) != size) {
    return Error("edge " + at + " -> " + target + " (from layer '" + p.from() +
                 "'): " + ShapeText(shape) + " (" + std::to_string(Count(shape)) +
                 " values) reaches '" + target + "' of " + ShapeText(layer_shape_.at(target)) +
                 " (" + std::to_string(size) + ")");
  }
  if (p.stages_size() == 0) {  // straight from layer to layer
    v1::Stage* s = p.add_stages();
    s->set_kind("reshape");
    s->add_in_shape(static_cast<uint32_t>(size));
    s->add_out_shape(static_cast<uint32_t>(size));
  }
  p.set_to(target);
  if (model_.projections_size() >= static_cast<int>(kMaxPaths)) {
    return Error("more than " + std::to_string(kMaxPaths) + " paths between layers");
  }
  *model_.add_projections() = std::move(p);
  return Status::Ok();
}

// One more step of a walk through the operators: bounded in count and in depth.
Status Translator::CountStep(const std::string& at, int depth) {
  if (++walk_steps_ > kMaxWalkSteps) {
    return Error("the graph has more than " + std::to_string(kMaxWalkSteps) +
                 " paths through its operators");
  }
  if (depth > kMaxOperatorChain) {
    return Error("a loop of operators with no neuron layer in it, through node '" + at + "'");
  }
  return Status::Ok();
}

Status Translator::Walk(const std::string& from, const std::string& at, std::vector<uint32_t> shape,
                        v1::Projection chain, int depth) {
  SNN_RETURN_IF_ERROR(CountStep(at, depth));
  auto [begin, end] = out_edges_.equal_range(at);
  for (auto it = begin; it != end; ++it) {
    const NirNode& next = graph_.nodes.at(it->second);
    v1::Projection longer = chain;
    if (back_edges_.count({at, next.name})) {  // closes a loop: the next step
      longer.set_delay_steps(longer.delay_steps() + 1);
    }
    if (next.type == "Output" && next.top_level) {
      if (chain.stages_size() == 0 && longer.delay_steps() == 0) {
        direct_outputs_.push_back(from);
      } else {
        auto out_shape = LayerShape(next);
        if (!out_shape.ok()) return out_shape.status();
        if (Count(shape) != Count(*out_shape)) {
          return Error("edge " + at + " -> " + next.name + ": " + ShapeText(shape) +
                       " reaches an output of " + ShapeText(*out_shape));
        }
        longer.set_to(next.name);
        into_outputs_.push_back(std::move(longer));
      }
      continue;
    }
    if (population_.count(next.name)) {
      SNN_RETURN_IF_ERROR(Emit(at, next.name, std::move(longer), shape));
      continue;
    }
    std::vector<uint32_t> next_shape = shape;
    SNN_RETURN_IF_ERROR(AddOperator(next, next_shape, longer));
    if (longer.delay_steps() > kMaxDelaySteps) {
      return Error("the delays on the way to node '" + next.name + "' add up to more than " +
                   std::to_string(kMaxDelaySteps) + " steps");
    }
    SNN_RETURN_IF_ERROR(Walk(from, next.name, next_shape, std::move(longer), depth + 1));
  }
  return Status::Ok();
}

// Carries a bias from the operator that adds it through the operators after it to the layers it
// reaches, whose constant input it becomes (all signals start from a network at rest, so a
// bias is there from the first step, whatever delays or loops lie on its way).
Status Translator::CarryBias(const std::string& at, const std::vector<double>& value, int depth) {
  SNN_RETURN_IF_ERROR(CountStep(at, depth));
  auto [begin, end] = out_edges_.equal_range(at);
  for (auto it = begin; it != end; ++it) {
    const std::string& next = it->second;
    auto layer = population_.find(next);
    if (layer != population_.end()) {
      v1::NirNeuron& nir = *model_.mutable_populations(layer->second)->mutable_nir();
      if (nir.kind() == "Input") {
        return Error("a bias reaches input '" + next + "', which takes only spikes");
      }
      if (nir.bias_size() == 0) nir.mutable_bias()->Resize(static_cast<int>(value.size()), 0.0);
      for (size_t i = 0; i < value.size(); ++i) {
        nir.set_bias(static_cast<int>(i), nir.bias(static_cast<int>(i)) + value[i]);
      }
      continue;
    }
    if (graph_.nodes.at(next).type == "Output" && graph_.nodes.at(next).top_level) {
      return Error("a bias reaches output '" + next + "' with no layer between");
    }
    auto stages = operator_stages_.find(next);
    if (stages == operator_stages_.end()) continue;  // on no path between layers: nothing reads it
    std::vector<double> carried = value;
    for (const v1::Stage& s : stages->second) carried = ApplyStage(s, carried);
    SNN_RETURN_IF_ERROR(CarryBias(next, carried, depth + 1));
  }
  return Status::Ok();
}

Status Translator::AddBiases() {
  for (const auto& [name, bias] : operator_bias_) SNN_RETURN_IF_ERROR(CarryBias(name, bias, 0));
  return Status::Ok();
}

Result<v1::Model> Translator::Run() {
  if (!(options_.step_ms >= 0.001 && options_.step_ms <= 1000)) {
    return Error("the step must be between 0.001 and 1000 ms");
  }
  for (const auto& [name, n] : graph_.nodes) {
    const bool port = n.type == "Input" || n.type == "Output";
    if (!port && !NeuronTypes().count(n.type) && !OperatorTypes().count(n.type)) {
      return Error("node '" + name + "' has type '" + n.type +
                   "', which snn cannot run (known: " + KnownTypes() + ")");
    }
  }
  // Children in name order: the walk, and so which edges close loops, depends on nothing else.
  std::sort(graph_.edges.begin(), graph_.edges.end());
  for (const auto& [from, to] : graph_.edges) out_edges_.emplace(from, to);
  Order();
  for (const std::string& name : order_) {
    const NirNode& n = graph_.nodes.at(name);
    if (NeuronTypes().count(n.type) || (n.type == "Input" && n.top_level)) {
      SNN_RETURN_IF_ERROR(AddPopulation(n));
    }
  }
  const int layers = model_.populations_size();
  for (int i = 0; i < layers; ++i) {
    const std::string name = model_.populations(i).name();
    v1::Projection chain;
    chain.set_from(name);
    chain.set_connectivity("stages");
    SNN_RETURN_IF_ERROR(Walk(name, name, layer_shape_[name], chain, 0));
  }
  if (!into_outputs_.empty()) {  // the Output is a layer of its own: it passes on what reaches it
    std::set<std::string> done;
    for (v1::Projection& p : into_outputs_) {
      if (done.insert(p.to()).second) {
        SNN_RETURN_IF_ERROR(AddPopulation(graph_.nodes.at(p.to())));
      }
      const std::string to = p.to();
      SNN_RETURN_IF_ERROR(Emit(p.from(), to, std::move(p), layer_shape_[to]));
    }
  }
  SNN_RETURN_IF_ERROR(AddBiases());
  for (const std::string& layer : direct_outputs_) {
    model_.mutable_populations(population_[layer])->set_role("output");
  }
  for (auto& [name, index] : population_) {
    if (graph_.nodes.at(name).type == "Output") {
      model_.mutable_populations(index)->set_role("output");
    }
  }
  model_.set_dynamics("nir");
  model_.set_timestep_ms(options_.step_ms);
  if (Status s = ValidateModel(model_); !s.ok()) return Error(s.message());
  return std::move(model_);
}

std::string BaseName(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  const size_t dot = base.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

// HDF5 and the magic-number check open the path: never a FIFO or a device, which would block
// or read for ever. Whatever the kind, the JSON reader names the problem as for any model.
bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

Result<v1::Model> LoadNirFile(const std::string& path, const NirOptions& options) {
  if (!IsRegularFile(path)) return LoadModelFile(path);  // its error: missing, a FIFO, ...
  auto graph = ReadNirGraph(path);
  if (!graph.ok()) return graph.status();
  auto model = Translator(path, std::move(graph).value(), options).Run();
  if (model.ok()) model->set_name(BaseName(path));
  return model;
}

Result<v1::Model> LoadAnyModelFile(const std::string& path, const NirOptions& options) {
  return LooksLikeNir(path) ? LoadNirFile(path, options) : LoadModelFile(path);
}

}  // namespace snn
