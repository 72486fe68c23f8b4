#include "common/model/nir_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <set>

#include "common/model/model.h"
#include "common/model/nir_graph.h"

namespace snn {
namespace {

constexpr double kStepS = 1e-3;        // the model's timestep: 1 ms
constexpr double kNoLeakTauMs = 1e7;   // IF and Integrator: a leak too slow to matter
constexpr double kNeverSpikes = 1e30;  // LI and Integrator: a threshold never reached
constexpr size_t kMaxPaths = 10'000;   // projections (paths between layers)
constexpr int kMaxOperatorChain = 64;  // operators between two layers
constexpr uint64_t kMaxWalkSteps = 1'000'000;

const std::set<std::string>& NeuronTypes() {
  static const std::set<std::string> t = {"LIF", "CubaLIF", "IF", "LI", "Integrator", "Threshold"};
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

std::vector<uint32_t> Shape(const std::vector<uint64_t>& dims) {
  std::vector<uint32_t> s;
  for (uint64_t d : dims) s.push_back(static_cast<uint32_t>(std::min<uint64_t>(d, UINT32_MAX)));
  if (s.empty()) s.push_back(1);
  return s;
}

uint64_t Count(const std::vector<uint32_t>& shape) {
  uint64_t n = 1;
  for (uint32_t d : shape) n = std::min<uint64_t>(n * d, uint64_t{1} << 40);
  return n;
}

std::string ShapeText(const std::vector<uint32_t>& shape) {
  std::string s;
  for (uint32_t d : shape) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

class Translator {
 public:
  Translator(std::string path, NirGraph graph) : path_(std::move(path)), graph_(std::move(graph)) {}
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
  // Element i of a parameter given per neuron or once for the layer.
  static double At(const NirArray& a, uint64_t i) {
    return a.values.size() == 1 ? a.values[0] : a.values[i % a.values.size()];
  }
  static double Mean(const NirArray* a, double fallback) {
    if (a == nullptr || a->values.empty()) return fallback;
    return std::accumulate(a->values.begin(), a->values.end(), 0.0) /
           static_cast<double>(a->values.size());
  }
  Result<std::vector<uint32_t>> LayerShape(const NirNode& n) const;
  Status AddPopulation(const NirNode& n);
  Result<std::vector<float>> InputGain(const NirNode& n, uint64_t size) const;
  Status AddOperator(const NirNode& n, std::vector<uint32_t>& shape, v1::Projection& p) const;
  Status Walk(const std::string& from, const std::string& at, std::vector<uint32_t> shape,
              v1::Projection chain, int depth);
  Status Emit(const std::string& target, v1::Projection p, const std::vector<uint32_t>& shape);

  std::string path_;
  NirGraph graph_;
  std::multimap<std::string, std::string> out_edges_;
  std::map<std::string, std::vector<uint32_t>> layer_shape_;  // populations by node name
  std::map<std::string, int> population_;
  v1::Model model_;
  std::vector<std::string> direct_outputs_;   // layers an Output takes as they are
  std::vector<v1::Projection> into_outputs_;  // operator paths into an Output
  uint64_t walk_steps_ = 0;
};

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

Status Translator::AddPopulation(const NirNode& n) {
  auto shape = LayerShape(n);
  if (!shape.ok()) return shape.status();
  v1::Population& p = *model_.add_populations();
  p.set_name(n.name);
  p.set_size(static_cast<int64_t>(Count(*shape)));
  if (n.type == "Input") p.set_role("input");
  v1::LifParams& lif = *p.mutable_neuron();
  lif.set_refractory_ms(0);
  lif.set_v_rest(0);
  lif.set_v_reset(Mean(Param(n, "v_reset"), 0));
  lif.set_v_threshold(Mean(Param(n, "v_threshold"), 1));
  lif.set_tau_m_ms(kNoLeakTauMs);
  if (n.type == "LIF" || n.type == "LI" || n.type == "CubaLIF") {
    auto tau = Need(n, n.type == "CubaLIF" ? "tau_mem" : "tau");
    if (!tau.ok()) return tau.status();
    lif.set_tau_m_ms(Mean(*tau, 0) * 1000);
    lif.set_v_rest(Mean(Param(n, "v_leak"), 0));
  }
  if (n.type == "LI" || n.type == "Integrator") lif.set_v_threshold(kNeverSpikes);
  if (n.type == "Threshold") {
    lif.set_tau_m_ms(kStepS * 1000);  // no memory past a step
    lif.set_v_threshold(Mean(Param(n, "threshold"), 0));
  }
  if (n.type == "Output") lif = v1::LifParams();  // an output layer of plain LIF defaults
  population_[n.name] = model_.populations_size() - 1;
  layer_shape_[n.name] = *shape;
  return Status::Ok();
}

// What one unit of input does to each neuron's potential, for a layer's neuron model.
Result<std::vector<float>> Translator::InputGain(const NirNode& n, uint64_t size) const {
  std::vector<float> gain(size, 1.0f);
  if (n.type == "Threshold" || n.type == "Input" || n.type == "Output") return gain;
  const NirArray* r = Param(n, "r");
  for (uint64_t i = 0; i < size; ++i) {
    double g = r ? At(*r, i) : 1.0;
    if (n.type == "LIF" || n.type == "LI") {
      const double tau = At(**Need(n, "tau"), i);
      if (!(tau > 0)) return Error("node '" + n.name + "': tau must be greater than 0");
      g *= kStepS / tau;
    } else if (n.type == "CubaLIF") {
      const double tau_mem = At(**Need(n, "tau_mem"), i);
      auto tau_syn = Need(n, "tau_syn");
      if (!tau_syn.ok()) return tau_syn.status();
      if (!(tau_mem > 0) || !(At(**tau_syn, i) > 0)) {
        return Error("node '" + n.name + "': tau_mem and tau_syn must be greater than 0");
      }
      const NirArray* w_in = Param(n, "w_in");
      g *= (w_in ? At(*w_in, i) : 1.0) * At(**tau_syn, i) / tau_mem;
    }
    if (!std::isfinite(g)) return Error("node '" + n.name + "': its parameters are not finite");
    gain[i] = static_cast<float>(g);
  }
  return gain;
}

// Appends node `n`'s operator to the chain `p`, whose elements have `shape` so far.
Status Translator::AddOperator(const NirNode& n, std::vector<uint32_t>& shape,
                               v1::Projection& p) const {
  const std::string who = "node '" + n.name + "' (" + n.type + ")";
  const uint64_t in = Count(shape);
  auto stage = [&](const std::string& kind) {
    v1::Stage* s = p.add_stages();
    s->set_kind(kind);
    for (uint32_t d : shape) s->add_in_shape(d);
    return s;
  };
  auto finish = [&](v1::Stage* s, std::vector<uint32_t> out) {
    for (uint32_t d : out) s->add_out_shape(d);
    shape = std::move(out);
  };
  if (n.type == "Affine" || n.type == "Linear") {
    auto w = Need(n, "weight");
    if (!w.ok()) return w.status();
    const NirArray& a = **w;
    if (a.dims.size() != 2 || a.dims[1] != in) {
      return Error(who + " takes " + (a.dims.size() == 2 ? std::to_string(a.dims[1]) : "?") +
                   " inputs; " + std::to_string(in) + " come in");
    }
    v1::Stage* s = stage("dense");
    for (double v : a.values) s->add_weights(static_cast<float>(v));
    finish(s, {static_cast<uint32_t>(a.dims[0])});
  } else if (n.type == "Scale") {
    auto w = Need(n, "scale");
    if (!w.ok()) return w.status();
    v1::Stage* s = stage("scale");
    for (uint64_t i = 0; i < in; ++i) s->add_weights(static_cast<float>(At(**w, i)));
    finish(s, shape);
  } else if (n.type == "Flatten" || n.type == "Delay" || n.type == "Input" || n.type == "Output") {
    if (n.type == "Delay") {
      const double steps = std::round(Mean(Param(n, "delay"), 0) / kStepS);
      if (!(steps >= 0 && steps <= 65536)) return Error(who + ": delay out of range");
      p.set_delay_steps(std::max<uint32_t>(p.delay_steps(), static_cast<uint32_t>(steps)));
    }
    finish(stage("reshape"), n.type == "Flatten" ? std::vector<uint32_t>{uint32_t(in)} : shape);
  } else {  // Conv1d, Conv2d, SumPool2d, SumPooling, AvgPool2d
    const bool conv = n.type == "Conv1d" || n.type == "Conv2d";
    const size_t rank = n.type == "Conv1d" ? 1 : 2;
    std::vector<uint32_t> kernel;
    uint32_t channels = shape.size() == rank + 1 ? shape[0] : 0;
    const NirArray* w = nullptr;
    if (conv) {
      auto weight = Need(n, "weight");
      if (!weight.ok()) return weight.status();
      w = *weight;
      if (w->dims.size() != rank + 2) return Error(who + ": its weight has the wrong rank");
      for (size_t i = 2; i < w->dims.size(); ++i) kernel.push_back(uint32_t(w->dims[i]));
      const double groups = Mean(Param(n, "groups"), 1);
      channels = static_cast<uint32_t>(w->dims[1] * std::max(1.0, groups));
    } else {
      auto k = Need(n, "kernel_size");
      if (!k.ok()) return k.status();
      for (size_t i = 0; i < rank; ++i) kernel.push_back(uint32_t(At(**k, i)));
    }
    if (shape.size() != rank + 1) {  // flat so far: take the spatial shape the node gives
      const NirArray* spatial = Param(n, "input_shape");
      std::vector<uint32_t> s = {channels};
      for (size_t i = 0; spatial && i < rank && i < spatial->values.size(); ++i) {
        s.push_back(uint32_t(spatial->values[i]));
      }
      if (s.size() != rank + 1 || Count(s) != in) {
        return Error(who + " gets " + ShapeText(shape) + " and cannot tell its " +
                     (rank == 2 ? "C,H,W" : "C,L") + " shape");
      }
      finish(stage("reshape"), s);
    }
    v1::Stage* s = stage(conv ? "conv" : (n.type == "AvgPool2d" ? "avg_pool" : "sum_pool"));
    for (uint32_t k : kernel) s->add_kernel(k);
    auto spatial = [&](const char* key, uint32_t fallback,
                       google::protobuf::RepeatedField<uint32_t>* into) -> Status {
      const NirArray* a = Param(n, key);
      for (size_t i = 0; i < rank; ++i) {
        const double v = a && !a->values.empty() ? At(*a, i) : fallback;
        if (!(v >= 0 && v <= 4096)) return Error(who + ": " + key + " out of range");
        into->Add(static_cast<uint32_t>(v));
      }
      return Status::Ok();
    };
    if (Param(n, "padding") == nullptr && n.strings.count("padding")) {
      return Error(who + ": padding '" + n.strings.at("padding") +
                   "' is not supported; give sizes");
    }
    SNN_RETURN_IF_ERROR(spatial("stride", conv ? 1 : 0, s->mutable_stride()));
    if (!conv && Param(n, "stride") == nullptr) {  // pooling strides default to the window
      for (size_t i = 0; i < rank; ++i) s->set_stride(static_cast<int>(i), kernel[i]);
    }
    SNN_RETURN_IF_ERROR(spatial("padding", 0, s->mutable_padding()));
    uint32_t out_c = shape[0];
    if (conv) {
      SNN_RETURN_IF_ERROR(spatial("dilation", 1, s->mutable_dilation()));
      s->set_groups(static_cast<uint32_t>(std::max(1.0, Mean(Param(n, "groups"), 1))));
      for (double v : w->values) s->add_weights(static_cast<float>(v));
      out_c = static_cast<uint32_t>(w->dims[0]);
    }
    std::vector<uint32_t> out = {out_c};
    for (size_t i = 0; i < rank; ++i) {
      const int64_t in_d = shape[1 + i], k = kernel[i];
      const int64_t st = std::max<uint32_t>(1, s->stride(static_cast<int>(i)));
      const int64_t pad = s->padding(static_cast<int>(i));
      const int64_t dil = conv ? s->dilation(static_cast<int>(i)) : 1;
      const int64_t room = in_d + 2 * pad - dil * (k - 1) - 1;
      if (room < 0) return Error(who + ": its window is larger than its input " + ShapeText(shape));
      out.push_back(static_cast<uint32_t>(room / st + 1));
    }
    finish(s, out);
  }
  return Status::Ok();
}

Status Translator::Emit(const std::string& target, v1::Projection p,
                        const std::vector<uint32_t>& shape) {
  const NirNode& t = graph_.nodes.at(target);
  const uint64_t size = Count(layer_shape_.at(target));
  if (Count(shape) != size) {
    return Error("edge " + p.from() + " -> " + target + ": " + std::to_string(Count(shape)) +
                 " values reach a layer of " + std::to_string(size));
  }
  auto gain = InputGain(t, size);
  if (!gain.ok()) return gain.status();
  if (p.stages_size() == 0 ||
      std::any_of(gain->begin(), gain->end(), [](float g) { return g != 1.0f; })) {
    v1::Stage* s = p.add_stages();
    s->set_kind("scale");
    s->add_in_shape(static_cast<uint32_t>(size));
    s->add_out_shape(static_cast<uint32_t>(size));
    for (float g : *gain) s->add_weights(g);
  }
  p.set_to(target);
  if (model_.projections_size() >= static_cast<int>(kMaxPaths)) {
    return Error("more than " + std::to_string(kMaxPaths) + " paths between layers");
  }
  *model_.add_projections() = std::move(p);
  return Status::Ok();
}

Status Translator::Walk(const std::string& from, const std::string& at, std::vector<uint32_t> shape,
                        v1::Projection chain, int depth) {
  if (++walk_steps_ > kMaxWalkSteps) {
    return Error("the graph has more than " + std::to_string(kMaxWalkSteps) +
                 " paths through its operators");
  }
  if (depth > kMaxOperatorChain) {
    return Error("a loop of operators with no neuron layer in it, through node '" + at + "'");
  }
  auto [begin, end] = out_edges_.equal_range(at);
  for (auto it = begin; it != end; ++it) {
    const NirNode& next = graph_.nodes.at(it->second);
    if (next.type == "Output" && next.top_level) {
      if (chain.stages_size() == 0) {
        direct_outputs_.push_back(from);
      } else {
        v1::Projection p = chain;
        if (Count(shape) != Count(*LayerShape(next))) {
          return Error("edge " + at + " -> " + next.name + ": " + std::to_string(Count(shape)) +
                       " values reach an output of " + ShapeText(*LayerShape(next)));
        }
        p.set_to(next.name);
        into_outputs_.push_back(std::move(p));
      }
      continue;
    }
    if (population_.count(next.name)) {
      SNN_RETURN_IF_ERROR(Emit(next.name, chain, shape));
      continue;
    }
    v1::Projection longer = chain;
    std::vector<uint32_t> next_shape = shape;
    SNN_RETURN_IF_ERROR(AddOperator(next, next_shape, longer));
    SNN_RETURN_IF_ERROR(Walk(from, next.name, next_shape, std::move(longer), depth + 1));
  }
  return Status::Ok();
}

Result<v1::Model> Translator::Run() {
  for (const auto& [name, n] : graph_.nodes) {
    const bool port = n.type == "Input" || n.type == "Output";
    if (!port && !NeuronTypes().count(n.type) && !OperatorTypes().count(n.type)) {
      return Error("node '" + name + "' has type '" + n.type +
                   "', which snn cannot run (known: " + KnownTypes() + ")");
    }
  }
  for (const auto& [from, to] : graph_.edges) out_edges_.emplace(from, to);
  // Layers in the order spikes reach them from the inputs (then any the inputs never reach).
  std::vector<std::string> order, queue;
  std::set<std::string> seen;
  for (const auto& [name, n] : graph_.nodes) {
    if (n.type == "Input" && n.top_level && seen.insert(name).second) queue.push_back(name);
  }
  for (size_t i = 0; i < queue.size(); ++i) {
    order.push_back(queue[i]);
    auto [begin, end] = out_edges_.equal_range(queue[i]);
    for (auto it = begin; it != end; ++it) {
      if (seen.insert(it->second).second) queue.push_back(it->second);
    }
  }
  for (const auto& [name, n] : graph_.nodes) {
    if (seen.insert(name).second) order.push_back(name);
  }
  for (const std::string& name : order) {
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
  if (!into_outputs_.empty()) {  // the Output is a layer of its own
    std::set<std::string> done;
    for (v1::Projection& p : into_outputs_) {
      if (done.insert(p.to()).second) SNN_RETURN_IF_ERROR(AddPopulation(graph_.nodes.at(p.to())));
      const std::string to = p.to();
      SNN_RETURN_IF_ERROR(Emit(to, std::move(p), layer_shape_[to]));
    }
  }
  for (const std::string& layer : direct_outputs_) {
    model_.mutable_populations(population_[layer])->set_role("output");
  }
  for (auto& [name, index] : population_) {
    if (graph_.nodes.at(name).type == "Output") {
      model_.mutable_populations(index)->set_role("output");
    }
  }
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

Result<v1::Model> LoadNirFile(const std::string& path) {
  if (!IsRegularFile(path)) return LoadModelFile(path);  // its error: missing, a FIFO, ...
  auto graph = ReadNirGraph(path);
  if (!graph.ok()) return graph.status();
  auto model = Translator(path, std::move(graph).value()).Run();
  if (model.ok()) model->set_name(BaseName(path));
  return model;
}

Result<v1::Model> LoadAnyModelFile(const std::string& path) {
  return LooksLikeNir(path) ? LoadNirFile(path) : LoadModelFile(path);
}

}  // namespace snn
