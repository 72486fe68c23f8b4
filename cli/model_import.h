// The model a job or an estimate names, as snnctl reads it: JSON here; NIR (HDF5) through
// snn-nir-import, a helper installed beside snnctl, so that snnctl itself does not load the HDF5
// library and the dozens it drags in at every start (one snnctl per submit is a common way to
// drive a cluster). The helper runs as the same user and reads the file with the same rights.
#pragma once

#include <string>

#include "common/base/status.h"
#include "proto/model.pb.h"

namespace snn {

// `step_ms`: a NIR model's time step (0: 1 ms); a JSON model gives its own. `reset`: how a NIR
// model's spiking layers without v_reset reset ("", "subtract" or "zero"; common/model/
// nir_model.h); where it is "" and the file is silent, a note on standard error says so.
Result<v1::Model> LoadModelOfJob(const std::string& path, double step_ms = 0,
                                 const std::string& reset = "");

}  // namespace snn
