#include "common/model/nir_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "common/model/model.h"
#include "common/model/nir_graph.h"
#include "common/model/projection_stages.h"

namespace snn {
namespace {

constexpr size_t kMaxPaths = 10'000;   // projections (paths between layers)
constexpr int kMaxOperatorChain = 64;  // operators between two layers
constexpr uint64_t kMaxWalkSteps = 1'000'000;
constexpr uint32_t kMaxDelaySteps = 65'536;

const std::set<std::string>& NeuronTypes() {
  static const std::set<std::string> t = {"LIF", "CubaLIF",    "IF",       "LI",
                                          "I",   "Integrator", "Threshold"};
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

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
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
  if (type == "CubaLIF") {
    return {{"tau_mem", SNN_NIR_FIELD(tau), true},
            {"tau_syn", SNN_NIR_FIELD(tau_syn), true},
            {"r", SNN_NIR_FIELD(r), false},
            {"w_in", SNN_NIR_FIELD(w_in), false},
            {"v_leak", SNN_NIR_FIELD(v_leak), false},
            {"v_threshold", SNN_NIR_FIELD(v_threshold), true},
            {"v_reset", SNN_NIR_FIELD(v_reset), false}};
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
  // Element i of a parameter given per element or once for all.
  static double At(const NirArray& a, uint64_t i) {
    return a.values.size() == 1 ? a.values[0] : a.values[i % a.values.size()];
  }
  void Order();
  Result<std::vector<uint32_t>> LayerShape(const NirNode& n) const;
  Status AddPopulation(const NirNode& n);
  Status CheckTimeConstants(const NirNode& n, const v1::NirNeuron& nir) const;
  Status AddOperator(const NirNode& n, std::vector<uint32_t>& shape, v1::Projection& p);
  Status Walk(const std::string& from, const std::string& at, std::vector<uint32_t> shape,
              v1::Projection chain, int depth);
  Status Emit(const std::string& target, v1::Projection p, const std::vector<uint32_t>& shape);
  Status AddBiases();
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
      {n.type == "CubaLIF" ? "tau_mem" : "tau", &nir.tau()}, {"tau_syn", &nir.tau_syn()}};
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
  SNN_RETURN_IF_ERROR(CheckTimeConstants(n, nir));
  population_[n.name] = model_.populations_size() - 1;
  layer_shape_[n.name] = *shape;
  return Status::Ok();
}

// Appends node `n`'s operator to the chain `p`, whose elements have `shape` so far.
Status Translator::AddOperator(const NirNode& n, std::vector<uint32_t>& shape, v1::Projection& p) {
  const std::string who = "node '" + n.name + "' (" + n.type + ")";
  const uint64_t in = Count(shape);
  const int first_stage = p.stages_size();
  std::vector<double> bias;  // the node's own, in its output's shape
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
      return Error(who + " takes " +
                   (a.dims.size() == 2 ? std::to_string(a.dims[1]) : std::string("?")) +
                   " inputs (its weight is " + ShapeText(Shape(a.dims)) + "); " +
                   std::to_string(in) + " come in (" + ShapeText(shape) + ")");
    }
    v1::Stage* s = stage("dense");
    for (double v : a.values) s->add_weights(static_cast<float>(v));
    finish(s, {static_cast<uint32_t>(a.dims[0])});
    if (const NirArray* b = Param(n, "bias"); n.type == "Affine" && b && !b->values.empty()) {
      if (b->values.size() != 1 && b->values.size() != a.dims[0]) {
        return Error(who + ": its bias has " + std::to_string(b->values.size()) + " values for " +
                     std::to_string(a.dims[0]) + " outputs");
      }
      for (uint64_t i = 0; i < a.dims[0]; ++i) bias.push_back(At(*b, i));
    }
  } else if (n.type == "Scale") {
    auto w = Need(n, "scale");
    if (!w.ok()) return w.status();
    v1::Stage* s = stage("scale");
    for (uint64_t i = 0; i < in; ++i) s->add_weights(static_cast<float>(At(**w, i)));
    finish(s, shape);
  } else if (n.type == "Flatten" || n.type == "Delay" || n.type == "Input" || n.type == "Output") {
    if (n.type == "Delay") {
      auto d = Need(n, "delay");
      if (!d.ok()) return d.status();
      const double first = At(**d, 0);
      for (double v : (*d)->values) {
        if (v != first)
          return Error(who + ": delays differ between elements, which snn cannot run");
      }
      const double steps = first * 1000 / options_.step_ms;
      const double whole = std::round(steps);
      if (!(whole >= 0 && whole <= kMaxDelaySteps) ||
          std::abs(steps - whole) > 1e-6 * (1 + whole)) {
        return Error(who + ": a delay of " + Number(first) + " s is not a whole number of " +
                     Number(options_.step_ms) + " ms steps (at most " +
                     std::to_string(kMaxDelaySteps) + ")");
      }
      p.set_delay_steps(p.delay_steps() + static_cast<uint32_t>(whole));
    }
    finish(stage("reshape"), n.type == "Flatten" ? std::vector<uint32_t>{uint32_t(in)} : shape);
  } else {  // Conv1d, Conv2d, SumPool2d, SumPooling, AvgPool2d
    const bool conv = n.type == "Conv1d" || n.type == "Conv2d";
    const size_t rank = n.type == "Conv1d" ? 1 : 2;
    std::vector<uint32_t> kernel;
    uint32_t channels = shape.size() == rank + 1 ? shape[0] : 0;
    const NirArray* w = nullptr;
    double groups = 1;
    if (conv) {
      auto weight = Need(n, "weight");
      if (!weight.ok()) return weight.status();
      w = *weight;
      if (w->dims.size() != rank + 2) return Error(who + ": its weight has the wrong rank");
      for (size_t i = 2; i < w->dims.size(); ++i) kernel.push_back(uint32_t(w->dims[i]));
      if (const NirArray* g = Param(n, "groups"); g && !g->values.empty()) groups = g->values[0];
      if (!(groups >= 1 && groups <= 65536)) return Error(who + ": groups out of range");
      channels = static_cast<uint32_t>(w->dims[1] * groups);
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
    if (conv && shape[0] != channels) {
      return Error(who + " takes " + std::to_string(channels) + " channels; " + ShapeText(shape) +
                   " comes in");
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
      s->set_groups(static_cast<uint32_t>(groups));
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
    if (const NirArray* b = Param(n, "bias"); conv && b && !b->values.empty()) {
      if (b->values.size() != 1 && b->values.size() != out_c) {
        return Error(who + ": its bias has " + std::to_string(b->values.size()) + " values for " +
                     std::to_string(out_c) + " channels");
      }
      const uint64_t per_channel = Count(out) / out_c;
      for (uint32_t c = 0; c < out_c; ++c) bias.insert(bias.end(), per_channel, At(*b, c));
    }
  }
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

Status Translator::Emit(const std::string& target, v1::Projection p,
                        const std::vector<uint32_t>& shape) {
  const uint64_t size = Count(layer_shape_.at(target));
  if (Count(shape) != size) {
    return Error("edge " + p.from() + " -> " + target + ": " + ShapeText(shape) + " (" +
                 std::to_string(Count(shape)) + " values) reaches '" + target + "' of " +
                 ShapeText(layer_shape_.at(target)) + " (" + std::to_string(size) + ")");
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
      SNN_RETURN_IF_ERROR(Emit(next.name, std::move(longer), shape));
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
  if (++walk_steps_ > kMaxWalkSteps) {
    return Error("the graph has more than " + std::to_string(kMaxWalkSteps) +
                 " paths through its operators");
  }
  if (depth > kMaxOperatorChain) {
    return Error("a loop of operators with no neuron layer in it, through node '" + at + "'");
  }
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
      SNN_RETURN_IF_ERROR(Emit(to, std::move(p), layer_shape_[to]));
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
