#include "common/model/nir_dynamics.h"

#include <cmath>
#include <map>
#include <set>
#include <string>

namespace snn {
namespace {

const std::set<std::string>& Kinds() {
  static const std::set<std::string> k = {"Input", "LIF", "CubaLIF",   "CubaLI", "IF",
                                          "LI",    "I",   "Threshold", "Output"};
  return k;
}

Status CheckValues(const std::string& layer, const char* what,
                   const google::protobuf::RepeatedField<double>& values, int64_t size,
                   bool time_constant) {
  if (!values.empty() && values.size() != 1 && values.size() != size) {
    return InvalidArgument("population '" + layer + "': " + what + " has " +
                           std::to_string(values.size()) + " values; give 1 or " +
                           std::to_string(size));
  }
  for (double v : values) {
    if (!std::isfinite(v) || (time_constant && !(v > 0))) {
      return InvalidArgument("population '" + layer + "': " + what + " must be " +
                             (time_constant ? "positive numbers" : "finite numbers"));
    }
  }
  return Status::Ok();
}

}  // namespace

bool NirKindIsGraded(const std::string& kind) {
  return kind == "LI" || kind == "CubaLI" || kind == "I" || kind == "Output";
}

Status ValidateNirDynamics(const v1::Model& model) {
  std::map<std::string, int> index;
  for (int i = 0; i < model.populations_size(); ++i) {
    const v1::Population& p = model.populations(i);
    index[p.name()] = i;
    const v1::NirNeuron& n = p.nir();
    if (!Kinds().count(n.kind())) {
      return InvalidArgument(
          "population '" + p.name() + "' has NIR kind '" + n.kind() +
          "' (known: Input, LIF, CubaLIF, CubaLI, IF, LI, I, Threshold, Output)");
    }
    if ((p.role() == "input") != (n.kind() == "Input")) {
      return InvalidArgument("population '" + p.name() +
                             "': input layers, and only they, are of kind Input");
    }
    const bool cuba = n.kind() == "CubaLIF" || n.kind() == "CubaLI";
    const bool leaky = n.kind() == "LIF" || n.kind() == "LI" || cuba;
    const bool fires =
        n.kind() == "LIF" || n.kind() == "CubaLIF" || n.kind() == "IF" || n.kind() == "Threshold";
    if (leaky && n.tau().empty()) {
      return InvalidArgument("population '" + p.name() + "' (" + n.kind() + ") needs tau");
    }
    if (cuba && n.tau_syn().empty()) {
      return InvalidArgument("population '" + p.name() + "' (" + n.kind() + ") needs tau_syn");
    }
    if (fires && n.v_threshold().empty()) {
      return InvalidArgument("population '" + p.name() + "' (" + n.kind() + ") needs v_threshold");
    }
    const int64_t size = p.size();
    SNN_RETURN_IF_ERROR(CheckValues(p.name(), "tau", n.tau(), size, true));
    SNN_RETURN_IF_ERROR(CheckValues(p.name(), "tau_syn", n.tau_syn(), size, true));
    SNN_RETURN_IF_ERROR(CheckValues(p.name(), "r", n.r(), size, false));
    SNN_RETURN_IF_ERROR(CheckValues(p.name(), "w_in", n.w_in(), size, false));
    SNN_RETURN_IF_ERROR(CheckValues(p.name(), "v_leak", n.v_leak(), size, false));
    SNN_RETURN_IF_ERROR(CheckValues(p.name(), "v_threshold", n.v_threshold(), size, false));
    SNN_RETURN_IF_ERROR(CheckValues(p.name(), "v_reset", n.v_reset(), size, false));
    SNN_RETURN_IF_ERROR(CheckValues(p.name(), "bias", n.bias(), size, false));
  }
  for (const v1::Projection& p : model.projections()) {
    if (p.connectivity() != "stages") {
      return InvalidArgument("projection " + p.from() + " -> " + p.to() +
                             ": a model with NIR dynamics connects layers by stages");
    }
    if (p.delay_steps() == 0 && index[p.to()] <= index[p.from()]) {
      return InvalidArgument("projection " + p.from() + " -> " + p.to() +
                             " takes effect in the same step but leads back to an earlier "
                             "layer; give it a delay of at least 1 step");
    }
  }
  return Status::Ok();
}

Result<NirReset> ParseNirReset(const std::string& word) {
  if (word.empty() || word == "subtract") return NirReset::kSubtract;
  if (word == "zero") return NirReset::kZero;
  return InvalidArgument("the reset of layers without v_reset is subtract or zero, not '" +
                         word.substr(0, 32) + "'");
}

std::vector<std::string> MissingReset(const v1::Model& model) {
  std::vector<std::string> out;
  if (model.dynamics() != "nir") return out;
  for (const auto& p : model.populations()) {
    const v1::NirNeuron& n = p.nir();
    if (n.v_threshold_size() > 0 && n.v_reset_size() == 0 && n.kind() != "Threshold") {
      out.push_back(p.name());
    }
  }
  return out;
}

}  // namespace snn
