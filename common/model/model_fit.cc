#include "common/model/model_fit.h"

#include <algorithm>
#include <set>

#include "common/base/job_validation.h"
#include "common/model/model.h"

namespace snn {

Result<uint32_t> NeuronsPerCoreOf(const v1::PoolStatusResponse& status,
                                  const std::string& board_type, const std::string& pool) {
  uint32_t npc = 0;
  std::set<std::string> types;
  for (const auto& node : status.nodes()) {
    if (!pool.empty() &&
        std::find(node.pools().begin(), node.pools().end(), pool) == node.pools().end()) {
      continue;
    }
    for (const auto& b : node.boards()) {
      types.insert(b.info().type());
      if (!AnyBoardType(board_type) && b.info().type() != board_type) continue;
      if (npc == 0 || b.info().neurons_per_core() < npc) npc = b.info().neurons_per_core();
    }
  }
  if (npc == 0) {
    std::string known;
    for (const auto& t : types) known += (known.empty() ? "" : ", ") + t;
    return InvalidArgument("no board of type '" + board_type + "'" +
                           (pool.empty() ? "" : " in pool '" + pool + "'") +
                           (known.empty() ? "" : " (types: " + known + ")"));
  }
  return npc;
}

Status FitModelToJob(v1::Model model, uint32_t neurons_per_core, double input_rate_hz,
                     v1::JobSpec& spec) {
  auto* r = spec.mutable_task()->mutable_resources();
  const ModelEstimate e = EstimateModel(model, neurons_per_core, input_rate_hz);
  if (e.cores > JobLimits::kMaxCores) {
    return InvalidArgument("model " + r->model() + " needs " + std::to_string(e.cores) +
                           " cores, more than any board has");
  }
  r->set_cores(e.cores);
  // The agent builds the network from this copy: it never opens a path a user named.
  *spec.mutable_task()->mutable_network() = std::move(model);
  return ValidateJobSpec(spec);
}

}  // namespace snn
