// A job's model on the boards it may use: the neurons per core of those boards (from the pool's
// status), and the job that carries the model: its cores (the estimate for those boards) and
// its network, which the agent builds the task's network from. snnctl does this with a model
// the user's own host reads; the master with one uploaded over HTTP. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "common/base/status.h"
#include "proto/job.pb.h"
#include "proto/model.pb.h"
#include "proto/node.pb.h"

namespace snn {

// Neurons per core of the boards a job could use: the given type's ("any": the smallest), in
// `pool` ("" : every pool).
Result<uint32_t> NeuronsPerCoreOf(const v1::PoolStatusResponse& status,
                                  const std::string& board_type, const std::string& pool);

// Sets `spec`'s cores for `model` on boards of `neurons_per_core` (inputs firing at
// `input_rate_hz`) and moves the model into it as its network, then validates the job.
Status FitModelToJob(v1::Model model, uint32_t neurons_per_core, double input_rate_hz,
                     v1::JobSpec& spec);

// The input rate estimates assume when nobody says (snnctl --input-rate).
inline constexpr double kDefaultInputRateHz = 10;

}  // namespace snn
