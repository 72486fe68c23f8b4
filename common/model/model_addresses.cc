#include "common/model/model_addresses.h"

namespace snn {

ModelAddresses::ModelAddresses(const v1::Model& model, uint32_t neurons_per_core)
    : neurons_per_core_(neurons_per_core == 0 ? 1 : neurons_per_core) {
  uint32_t core = 0;
  for (const auto& p : model.populations()) {
    const uint32_t size = static_cast<uint32_t>(p.size());
    layouts_.push_back({p.name(), size, core});
    const uint32_t cores = (size + neurons_per_core_ - 1) / neurons_per_core_;
    population_of_core_.insert(population_of_core_.end(), cores,
                               static_cast<uint32_t>(layouts_.size() - 1));
    core += cores;
  }
}

Result<wire::Spike> ModelAddresses::Of(const std::string& population, uint32_t neuron) const {
  for (const auto& l : layouts_) {
    if (l.name != population) continue;
    if (neuron >= l.size) {
      return InvalidArgument("population '" + population + "' has " + std::to_string(l.size) +
                             " neurons: there is no neuron " + std::to_string(neuron));
    }
    wire::Spike s;
    s.core = static_cast<uint16_t>(l.first_core + neuron / neurons_per_core_);
    s.neuron = static_cast<uint16_t>(neuron % neurons_per_core_);
    return s;
  }
  std::string known;
  for (const auto& l : layouts_) {
    known += (known.empty() ? "" : ", ") + l.name + " (" + std::to_string(l.size) + ")";
  }
  return NotFound("the model has no population '" + population + "' (it has " + known + ")");
}

bool ModelAddresses::NameOf(uint16_t core, uint16_t neuron, std::string* population,
                            uint32_t* index) const {
  if (core >= population_of_core_.size()) return false;
  const Layout& l = layouts_[population_of_core_[core]];
  const uint32_t i = (core - l.first_core) * neurons_per_core_ + neuron;
  if (i >= l.size) return false;
  *population = l.name;
  *index = i;
  return true;
}

std::string PopulationList(const v1::Model& model) {
  std::string known;
  for (const auto& p : model.populations()) {
    known += (known.empty() ? "" : ", ") + p.name() + " (" + std::to_string(p.size()) + ")";
  }
  return known;
}

}  // namespace snn
