#include "common/model/model_addresses.h"

#include <algorithm>
#include <iterator>

namespace snn {

ModelAddresses::ModelAddresses(const v1::Model& model, uint32_t neurons_per_core)
    : neurons_per_core_(neurons_per_core == 0 ? 1 : neurons_per_core) {
  uint64_t core = 0;
  for (const auto& p : model.populations()) {
    const uint64_t size = p.size() > 0 ? static_cast<uint64_t>(p.size()) : 0;
    layouts_.push_back({p.name(), size, core});
    core += (size + neurons_per_core_ - 1) / neurons_per_core_;
  }
}

Status ModelAddresses::Check(const std::string& population, uint32_t neuron) const {
  for (const auto& l : layouts_) {
    if (l.name != population) continue;
    if (neuron >= l.size) {
      return InvalidArgument("population '" + population + "' has " + std::to_string(l.size) +
                             " neurons: there is no neuron " + std::to_string(neuron));
    }
    return Status::Ok();
  }
  std::string known;
  for (const auto& l : layouts_) {
    known += (known.empty() ? "" : ", ") + l.name + " (" + std::to_string(l.size) + ")";
  }
  return NotFound("the model has no population '" + population + "' (it has " + known + ")");
}

Result<wire::Spike> ModelAddresses::Of(const std::string& population, uint32_t neuron) const {
  SNN_RETURN_IF_ERROR(Check(population, neuron));
  for (const auto& l : layouts_) {
    if (l.name != population) continue;
    const uint64_t core = l.first_core + neuron / neurons_per_core_;
    if (core > 0xffff) {
      return InvalidArgument("population '" + population + "' neuron " + std::to_string(neuron) +
                             " lies beyond the 65,536 cores a task addresses");
    }
    wire::Spike s;
    s.core = static_cast<uint16_t>(core);
    s.neuron = static_cast<uint16_t>(neuron % neurons_per_core_);
    return s;
  }
  return Internal("unreachable");
}

bool ModelAddresses::NameOf(uint16_t core, uint16_t neuron, std::string* population,
                            uint32_t* index) const {
  // The last population starting at or before `core` (an empty one starts where the next does).
  auto after = std::upper_bound(layouts_.begin(), layouts_.end(), uint64_t{core},
                                [](uint64_t c, const Layout& l) { return c < l.first_core; });
  if (after == layouts_.begin()) return false;
  const Layout& l = *std::prev(after);
  const uint64_t i = (core - l.first_core) * neurons_per_core_ + neuron;
  if (i >= l.size) return false;
  *population = l.name;
  *index = static_cast<uint32_t>(i);
  return true;
}

}  // namespace snn
