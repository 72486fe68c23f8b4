// Projections made of stages (v1::Stage): the operators a NIR graph puts between two neuron
// layers (dense and scaling weights, convolutions, pooling, reshapes), kept as operators so that
// a convolution travels as its kernel rather than as millions of synapses. Here: the checks
// that name what is wrong, a cheap bound on the synapses a chain makes, and the synapses
// themselves, one source neuron at a time.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/base/status.h"
#include "proto/model.pb.h"

namespace snn {

// Shapes, sizes and weights of every stage, and that the chain leads from a population of
// `from_size` neurons to one of `to_size`. `which` names the projection in errors.
Status CheckStages(const v1::Projection& p, int64_t from_size, int64_t to_size,
                   const std::string& which);

// At least the number of synapses the chain makes, without making them: what a network
// builder may allocate for. The projection must have passed CheckStages.
double StageSynapseBound(const v1::Projection& p, int64_t from_size, int64_t to_size);

// Calls fn(source, target, weight) for every synapse, sources in order; a path whose weight
// comes to 0 is no synapse, and paths to one target add up. Passed CheckStages.
void ForEachStageSynapse(const v1::Projection& p, uint32_t from_size,
                         const std::function<void(uint32_t, uint32_t, double)>& fn);

// One stage applied to a whole vector of values (its in_shape's count): what a bias becomes
// through the operators after it. The stage must have passed CheckStages.
std::vector<double> ApplyStage(const v1::Stage& s, const std::vector<double>& in);

}  // namespace snn
