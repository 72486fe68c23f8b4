// Reads the hot job records (pending, running, and ended with tasks still stopping) at start.
// Reading and parsing run on a second thread while the caller's thread indexes what is already
// parsed, so a restart with 100,000 hot jobs takes the longer of the two, not their sum.
#pragma once

#include <functional>

#include "master/store/store.h"
#include "proto/job.pb.h"

namespace snn {

// Hands every record under the job key prefix to `restore`, in key order, on the calling
// thread. Fails on a record that does not parse (naming its key) or a store error.
Status LoadHotJobs(Store& store, const std::function<void(v1::JobRecord)>& restore);

}  // namespace snn
