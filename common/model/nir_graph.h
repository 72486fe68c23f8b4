// A NIR file's graph as stored, read with the HDF5 C library: every node with its type and
// datasets, nested subgraphs flattened ("sub.node"), and the edges with subgraph names resolved
// to the subgraph's Input (as a target) or Output (as a source) node. No meaning is given to
// node types here: common/nir_model.cc does that.
// Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/base/status.h"

namespace snn {

struct NirArray {
  std::vector<double> values;
  std::vector<uint64_t> dims;  // empty for a scalar
};

struct NirNode {
  std::string name;                            // flattened: "sub.node"
  std::string type;                            // as the file says: "LIF", "Conv2d", ...
  bool top_level = true;                       // false inside a subgraph
  std::map<std::string, NirArray> numbers;     // numeric datasets ("group/dataset" one level down)
  std::map<std::string, std::string> strings;  // scalar string datasets other than the type
};

struct NirGraph {
  std::string version;
  std::map<std::string, NirNode> nodes;
  std::vector<std::pair<std::string, std::string>> edges;  // (source, target), resolved
};

// Every error names `path` and, where it applies, the node.
Result<NirGraph> ReadNirGraph(const std::string& path);

}  // namespace snn
