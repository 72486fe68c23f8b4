// Job arrays in the master: an array is one PENDING record while indices are left to start;
// the scheduler sees it as one job that may start several elements a pass (CollectPassInput),
// and each start splits an element off as a job of its own (SchedulingDriver). Its end is
// counted into the array, which ends once every element has. Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/base/status.h"
#include "proto/job.pb.h"

namespace snn {

// An array takes the tenant job IDs after its own, one for each element in index order:
// element `index`'s own ID (0 if it is not one of the array's).
uint64_t ElementTenantJobId(const v1::JobRecord& array, uint32_t index);
// The last tenant job ID `job` takes: its own, or an array's last element's.
uint64_t LastTenantJobId(const v1::JobRecord& job);

// At most this many elements of one array start in one pass.
inline constexpr uint32_t kArrayStartsPerPass = 64;

// What the master checks of an array at submit: kinds, and ranges as ParseArraySpec leaves
// them (a client other than snnctl may send any).
Status CheckArraySpec(const v1::JobSpec& spec);

// Whether `job` is an array with nothing left that could start (all started, cancelled or held).
inline bool ArrayExhausted(const v1::JobRecord& job) {
  return job.spec().has_array() && job.array_left_size() == 0;
}

// How many elements of `array` may start now, `active` being those not ended: of those left,
// with after_corr only those whose corresponding element completed.
uint32_t ArrayStartsAllowed(const v1::JobRecord& array, uint32_t active);
// The index to start next (ArrayStartsAllowed > 0), taken out of those left.
uint32_t TakeNextIndex(v1::JobRecord& array);

// Element `index` of `array`: its spec without the array, dependencies or singleton, and with
// SNN_ARRAY_* in its env; PENDING, submitted when the array was. Ids are the caller's.
v1::JobRecord ArrayElementOf(const v1::JobRecord& array, uint32_t index);

// An element of `array` ended in `state`: counted.
void CountElementEnd(v1::JobRecord& array, v1::JobState state);
// The state `array` ends in, once nothing is left, held or running (`active` elements not
// ended): COMPLETED if every element completed, FAILED if one failed or timed out, CANCELLED
// otherwise; nothing while it goes on.
std::optional<v1::JobState> ArrayEnd(const v1::JobRecord& array, uint32_t active);

}  // namespace snn
