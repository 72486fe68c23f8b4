// The checks a model with dynamics "nir" passes beyond ValidateModel's (common/model/model.h):
// each layer's kind and parameters (one value, or one per neuron; finite; time constants
// positive), input layers of kind Input, and projections taking effect in the same step only
// towards a later layer (the populations' order is the order layers are stepped in). A model
// that arrives over the wire is checked again here, so a hand-made one cannot reach the
// simulator with arrays of the wrong length.
// Pure; thread-safe.
#pragma once

#include "common/base/status.h"
#include "proto/model.pb.h"

namespace snn {

Status ValidateNirDynamics(const v1::Model& model);

// Whether a layer of this kind gives values (its potential, or what reaches it) rather than
// spikes: LI, CubaLI, I and Output.
bool NirKindIsGraded(const std::string& kind);

}  // namespace snn
