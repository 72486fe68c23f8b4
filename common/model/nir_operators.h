// One NIR operator node (Affine, Linear, Scale, Conv1d, Conv2d, SumPool2d, AvgPool2d, Flatten,
// Delay, and subgraph ports) as the stages of a projection (v1::Stage), with its bias apart:
// the NIR translation (common/model/nir_model.h) chains these between two layers.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "common/model/nir_graph.h"
#include "proto/model.pb.h"

namespace snn {

// Shapes as the translation speaks of them: the element count (capped at 2^40), a dataset's
// dimensions as a shape (a scalar: 1), "16x16x16", and a number in a short form.
uint64_t Count(const std::vector<uint32_t>& shape);
std::vector<uint32_t> Shape(const std::vector<uint64_t>& dims);
std::string ShapeText(const std::vector<uint32_t>& shape);
std::string Number(double v);

// Appends node `n`'s stages to `p`, whose elements have `shape` so far (updated to the node's
// output shape); a Delay adds its whole steps of `step_ms` to p's delay. The node's bias, if it
// has one, is appended to `bias` in the output's shape. Errors name `file` and the node.
Status AppendOperator(const NirNode& n, double step_ms, const std::string& file,
                      std::vector<uint32_t>& shape, v1::Projection& p, std::vector<double>* bias);

}  // namespace snn
