// A task's results: the files it left in its output directory ($SNN_OUTPUT_DIR, "output" in the
// task's directory on the node), listed or read a slice at a time for `snnctl results` through
// the master. The directory belongs to the task's user, so nothing in it is trusted: no symbolic
// link is followed (at any depth), only regular files owned by that user are listed or read, and
// a listing stops at kMaxResultFiles files kMaxResultDepth directories deep.
// Thread-compatible; blocking file reads (small, local).
#pragma once

#include <string>

#include "common/base/status.h"
#include "proto/node.pb.h"

namespace snn {

inline constexpr int kMaxResultFiles = 1000;
inline constexpr int kMaxResultDepth = 8;

// `request.list_results`: the list of files, by path under the output directory, sorted.
// `request.result`: a slice of that file (at most 1 MiB from `offset`).
Result<v1::TaskOutputResponse> ReadTaskResults(const std::string& data_dir,
                                               const v1::TaskOutputRequest& request);

}  // namespace snn
