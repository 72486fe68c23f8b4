// Admission of a submitted job: its defaults filled in, its spec checked against the limits,
// its queue known, and judged against every board of its pool (up or not) so that a job that
// could never run is refused at submit with the reason instead of waiting for ever.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "master/sched/pool_boards.h"
#include "proto/job.pb.h"
#include "proto/policy.pb.h"

namespace snn {

struct AdmissionLimits {
  std::string default_pool = "default";
  std::string default_queue = "default";
  uint64_t default_time_limit_s = 3600;
  uint64_t max_time_limit_s = 7 * 86400;
  uint32_t default_keepalive_s = 60;  // a session's, if it names none
  // 1 normalized throughput unit in measured KSPS (Resources.units); SchedulingDriver sets it
  // from snn-master --unit_ksps or --unit_board_type before each admission.
  double unit_ksps = 1000;
  std::string unit_board_type;  // set: 1 unit is this type's median measured KSPS
};

// Boards alike in everything admission looks at (pools, type, health, capacities, largest live
// rectangle), counted: a cluster of 10,000 nodes has a handful of classes, so a submit costs the
// same on it as on one node. `board` is one of them, named in messages.
struct BoardClass {
  BoardCapacity board;
  uint64_t count = 1;
};
std::vector<BoardClass> ClassifyBoards(std::vector<BoardCapacity> boards);

// The spec as it will be queued (defaults filled, `user` set as the submitter), or why not.
Result<v1::JobSpec> AdmitJob(v1::JobSpec spec, const std::string& user,
                             const AdmissionLimits& limits, const v1::SchedulingConfig& scheduling,
                             const std::vector<BoardClass>& boards);

}  // namespace snn
