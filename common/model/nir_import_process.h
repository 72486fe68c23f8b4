// snn-nir-import run as a child process: the model a NIR file makes, read by the helper so that
// the caller neither loads the HDF5 library (snnctl starts once per submit) nor parses a file it
// did not write in its own address space (the master reads uploads from any user: a damaged
// file may crash the helper, never the master). The helper runs under the limits given (CPU
// seconds and address space, set by the helper on itself before it opens the file), its answer
// is read up to `max_model_bytes`, and its one-line refusal becomes the error.
// Thread-safe (a child per call); blocks until the helper ends.
#pragma once

#include <cstdint>
#include <string>

#include "common/base/status.h"
#include "proto/model.pb.h"

namespace snn {

struct NirImportCall {
  std::string helper;             // the snn-nir-import program
  std::string path;               // the file
  std::string name;               // what errors call the file ("" : the path)
  double step_ms = 0;             // 0: 1 ms
  std::string reset;              // "", "subtract" or "zero"
  uint64_t max_cpu_s = 0;         // 0: no limit
  uint64_t max_memory_bytes = 0;  // 0: no limit
  size_t max_model_bytes = 64 << 20;
};

struct NirImported {
  v1::Model model;
  // The helper's note (which reset it assumed where the file gives none), "" if none.
  std::string note;
};

Result<NirImported> RunNirImport(const NirImportCall& call);

// snn-nir-import beside the running program (where it is installed, or the build tree's cli/
// beside a program in a sibling folder), "" when there is none.
std::string NirImportBesideSelf();

}  // namespace snn
