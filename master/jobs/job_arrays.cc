#include "master/jobs/job_arrays.h"

#include <algorithm>

#include "common/base/array_spec.h"

namespace snn {

Status CheckArraySpec(const v1::JobSpec& spec) {
  if (!spec.has_array()) return Status::Ok();
  if (spec.kind() != v1::BATCH) {
    return InvalidArgument("array: only batch jobs come in arrays");
  }
  const v1::ArraySpec& a = spec.array();
  if (a.ranges_size() == 0 || a.ranges_size() > static_cast<int>(ArrayLimits::kMaxRanges)) {
    return InvalidArgument("array: 1 to " + std::to_string(ArrayLimits::kMaxRanges) + " ranges");
  }
  for (int i = 0; i < a.ranges_size(); ++i) {
    const v1::ArrayRange& r = a.ranges(i);
    if (r.step() < 1 || r.last() < r.first() || r.last() > ArrayLimits::kMaxIndex ||
        (r.last() - r.first()) % r.step() != 0 || (i > 0 && r.first() <= a.ranges(i - 1).last())) {
      return InvalidArgument("array: range " + std::to_string(i) +
                             " is not in order, disjoint and on its step");
    }
  }
  if (CountOf(a.ranges()) > ArrayLimits::kMaxElements) {
    return InvalidArgument("array: more than " + std::to_string(ArrayLimits::kMaxElements) +
                           " elements");
  }
  return Status::Ok();
}

uint64_t ElementTenantJobId(const v1::JobRecord& array, uint32_t index) {
  uint64_t before = 0;
  for (const auto& r : array.spec().array().ranges()) {
    if (index < r.first()) return 0;
    if (index <= r.last()) {
      if ((index - r.first()) % r.step() != 0) return 0;
      return array.tenant_job_id() + 1 + before + (index - r.first()) / r.step();
    }
    before += (r.last() - r.first()) / r.step() + 1;
  }
  return 0;
}

uint64_t LastTenantJobId(const v1::JobRecord& job) {
  return job.tenant_job_id() + (job.spec().has_array() ? CountOf(job.spec().array().ranges()) : 0);
}

uint32_t ArrayStartsAllowed(const v1::JobRecord& array, uint32_t active) {
  const uint64_t left =
      array.spec().after_corr_size() > 0
          ? CountIn(array.array_left(), array.array_corr_settled(), kArrayStartsPerPass)
          : CountOf(array.array_left());
  uint64_t allowed = std::min<uint64_t>(left, kArrayStartsPerPass);
  if (const uint32_t k = array.spec().array().max_running(); k > 0) {
    allowed = std::min<uint64_t>(allowed, active >= k ? 0 : k - active);
  }
  return static_cast<uint32_t>(allowed);
}

uint32_t TakeNextIndex(v1::JobRecord& array) {
  if (array.spec().after_corr_size() == 0) return PopFirst(*array.mutable_array_left());
  const uint32_t index = *FirstIn(array.array_left(), array.array_corr_settled());
  RemoveSpan(*array.mutable_array_left(), index, index, nullptr);
  return index;
}

v1::JobRecord ArrayElementOf(const v1::JobRecord& array, uint32_t index) {
  v1::JobRecord element;
  element.set_tenant(array.tenant());
  *element.mutable_spec() = array.spec();
  v1::JobSpec& spec = *element.mutable_spec();
  spec.clear_array();
  spec.clear_after_ok();
  spec.clear_after_any();
  spec.clear_after_not_ok();
  spec.clear_after_corr();
  spec.set_singleton(false);
  const auto& ranges = array.spec().array().ranges();
  auto& env = *spec.mutable_task()->mutable_env();
  env["SNN_ARRAY_JOB_ID"] = std::to_string(array.tenant_job_id());
  env["SNN_ARRAY_TASK_ID"] = std::to_string(index);
  env["SNN_ARRAY_TASK_COUNT"] = std::to_string(CountOf(ranges));
  env["SNN_ARRAY_TASK_MIN"] = std::to_string(ranges.begin()->first());
  env["SNN_ARRAY_TASK_MAX"] = std::to_string(ranges.rbegin()->last());
  element.set_submit_ms(array.submit_ms());
  element.set_array_parent(array.id());
  element.set_array_job_id(array.tenant_job_id());
  element.set_array_task_id(index);
  return element;
}

void CountElementEnd(v1::JobRecord& array, v1::JobState state) {
  if (state == v1::COMPLETED) {
    array.set_array_completed(array.array_completed() + 1);
  } else if (state == v1::CANCELLED) {
    array.set_array_cancelled(array.array_cancelled() + 1);
  } else {
    array.set_array_failed(array.array_failed() + 1);
  }
}

std::optional<v1::JobState> ArrayEnd(const v1::JobRecord& array, uint32_t active) {
  if (array.array_left_size() > 0 || array.array_held_size() > 0 || active > 0) {
    return std::nullopt;
  }
  if (array.array_failed() > 0) return v1::FAILED;
  if (array.array_cancelled() > 0) return v1::CANCELLED;
  return v1::COMPLETED;
}

}  // namespace snn
