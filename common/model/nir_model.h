// NIR (Neuromorphic Intermediate Representation) files: the HDF5 graphs that Norse, snnTorch,
// Sinabs, Rockpool, Lava and others export, read with the HDF5 C library into the project's
// own model (proto/model.proto) with dynamics "nir", so that the simulated board, `snnctl
// simulate` and `snnctl estimate` run the network the file describes, exactly as docs/nir.md
// states it (forward Euler at the model's step, every parameter per neuron, biases kept).
//
// The translation:
// - Input nodes become input layers; LIF, CubaLIF, CubaLI, IF, LI, I (Integrator) and Threshold
// nodes
//   become layers with their own parameters (v1::NirNeuron); a top-level Output fed straight by
//   a layer marks that layer as the output, otherwise it becomes an output layer of its own
//   that passes on what reaches it.
// - Every path of operators between two layers (Affine, Linear, Scale, Conv1d, Conv2d,
//   SumPool2d, AvgPool2d, Flatten, Delay, and the Input/Output ports of nested subgraphs)
//   becomes one `stages` projection with the operators' weights as they are; the biases on the
//   way, carried through the operators after them, become the target layer's constant input.
// - Layers are ordered by a depth-first walk from the Inputs (names in order); an edge back to
//   a node still on the walk closes a loop and takes effect one step later; every other path
//   takes effect in the same step, plus its Delay nodes' steps (a delay must be a whole number
//   of steps).
// - Nested NIRGraph nodes are flattened ("sub.node"); an edge naming a subgraph enters at its
//   Input and leaves at its Output.
// What cannot be run exactly is refused with one line naming the file, the node and why:
// unknown node types, shapes that do not chain, a delay that is not a whole number of steps, a
// time constant shorter than the step (forward Euler would not follow it), parameters given
// per neuron for a layer of another size, and damaged or non-HDF5 files.
// Thread-compatible (the HDF5 library is not thread-safe in Debian's build).
#pragma once

#include <string>
#include <vector>

#include "common/base/status.h"
#include "common/model/nir_dynamics.h"
#include "proto/model.pb.h"

namespace snn {

struct NirOptions {
  double step_ms = 1;  // the model's time step: the one the network was trained with
  // How spiking layers that give no v_reset reset (common/model/nir_dynamics.h).
  NirReset reset = NirReset::kSubtract;
};

// Reads and validates a NIR file.
Result<v1::Model> LoadNirFile(const std::string& path, const NirOptions& options = {});

// A model file of either kind: NIR (HDF5) or JSON (common/model.h), told apart by content.
Result<v1::Model> LoadAnyModelFile(const std::string& path, const NirOptions& options = {});

}  // namespace snn
