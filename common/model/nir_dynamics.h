// The checks a model with dynamics "nir" passes beyond ValidateModel's (common/model/model.h):
// each layer's kind and parameters (one value, or one per neuron; finite; time constants
// positive), input layers of kind Input, and projections taking effect in the same step only
// towards a later layer (the populations' order is the order layers are stepped in). A model
// that arrives over the wire is checked again here, so a hand-made one cannot reach the
// simulator with arrays of the wrong length.
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/base/status.h"
#include "proto/model.pb.h"

namespace snn {

Status ValidateNirDynamics(const v1::Model& model);

// Whether a layer of this kind gives values (its potential, or what reaches it) rather than
// spikes: LI, CubaLI, I and Output.
bool NirKindIsGraded(const std::string& kind);

// How spiking layers (LIF, CubaLIF, IF) that give no v_reset reset after a spike. NIR files
// written before NIR 1.0 carry none, and readers differ: snnTorch and Rockpool subtract the
// threshold, the nir library reads a missing v_reset as 0. Subtracting is snn's default; a
// translation that leaves layers so says which (MissingReset), so the choice is never silent.
enum class NirReset { kSubtract, kZero };
// "subtract" or "zero" ("" is subtract), else an error naming the accepted words.
Result<NirReset> ParseNirReset(const std::string& word);
// The spiking layers of a "nir" model that give no v_reset (they reset by subtracting the
// threshold), by name.
std::vector<std::string> MissingReset(const v1::Model& model);

}  // namespace snn
