// NIR (Neuromorphic Intermediate Representation) files: the HDF5 graphs that Norse, snnTorch,
// Sinabs, Rockpool, Lava and others export, read with the HDF5 C library into the project's
// own model (proto/model.proto), so that estimates, submission and the simulated board take
// them as they take JSON models.
//
// The translation:
// - Input nodes become input populations; LIF, CubaLIF, IF, LI, Integrator and Threshold nodes
//   become populations (their parameters averaged over the layer; LI and Integrator never spike);
//   a top-level Output fed straight by a layer marks that layer as the output, otherwise it
//   becomes an output population of its own.
// - Every path of operators between two populations (Affine, Linear, Scale, Conv1d, Conv2d,
//   SumPool2d, AvgPool2d, Flatten, Delay, and the Input/Output ports of nested subgraphs)
//   becomes one `stages` projection, its last stage the target's input gain: r x dt / tau for
//   LIF and LI, r x w_in x tau_syn / tau_mem for CubaLIF, r for IF and Integrator (dt: the model's
//   1 ms step), so that a weight is the jump in potential one spike gives.
// - Nested NIRGraph nodes are flattened ("sub.node"); an edge naming a subgraph enters at its
//   Input and leaves at its Output.
// - Biases are not modelled (the board has no constant drive); Delay becomes the projection's
//   delay in steps.
// Unknown node types, shapes that do not chain, and damaged or non-HDF5 files are one-line
// errors naming the file and the node.
// Thread-compatible (the HDF5 library is not thread-safe in Debian's build).
#pragma once

#include <string>

#include "common/base/status.h"
#include "proto/model.pb.h"

namespace snn {

// Reads and validates a NIR file.
Result<v1::Model> LoadNirFile(const std::string& path);

// A model file of either kind: NIR (HDF5) or JSON (common/model.h), told apart by content.
Result<v1::Model> LoadAnyModelFile(const std::string& path);

}  // namespace snn
