// Spiking network model files: parsing (strict JSON), validation that names each problem, and
// the estimates snnctl gives before submitting: logical cores for a board type's neurons per
// core, a suggested rectangle, and the spike rate the network will produce.
// Pure apart from reading the file; thread-safe.
#pragma once

#include <string>

#include "common/base/status.h"
#include "proto/model.pb.h"

namespace snn {

Result<v1::Model> LoadModelFile(const std::string& path);

// Whether `path` is a regular file to read as NIR (common/model/nir_model.h): named *.nir, or
// starting as an HDF5 file does, whatever its name. Needs no HDF5.
bool LooksLikeNir(const std::string& path);
Result<v1::Model> ParseModelJson(const std::string& json);

// Fills defaults, then checks: unique names, sizes, roles, LIF parameters, projections naming
// known populations, connectivity and the shape of explicit weights.
Status ValidateModel(v1::Model& model);

struct ModelEstimate {
  uint64_t neurons = 0;
  uint64_t cores = 0;  // each population on its own cores (may exceed any mesh: callers check)
  uint32_t shape_width = 0, shape_height = 0;
  double spikes_per_s = 0;  // all populations, inputs included
  double synapses = 0;      // expected, for random connectivity
  double max_fan_in = 0;    // synapses into one neuron, on average, of the busiest population
};

// For a board with `neurons_per_core`, input populations firing at `input_rate_hz`.
// Rates follow the LIF rate for a constant drive, iterated to a fixed point.
ModelEstimate EstimateModel(const v1::Model& model, uint32_t neurons_per_core,
                            double input_rate_hz);

}  // namespace snn
