// JobLifecycle's part for job arrays: cancelling, holding and releasing slices of an array.
#include <glog/logging.h>

#include <vector>

#include "master/jobs/job_arrays.h"
#include "master/jobs/job_lifecycle.h"

namespace snn {
namespace {

bool InAny(const ArrayRanges& indices, uint32_t index) { return Contains(indices, index); }

std::string Named(const v1::JobRecord& array) {
  return "array " + std::to_string(array.tenant_job_id());
}

}  // namespace

Status JobLifecycle::CancelElements(v1::JobRecord& array, const ArrayRanges& indices,
                                    const std::string& reason) {
  if (IsTerminal(array.state())) {
    return FailedPrecondition(Named(array) + " has already ended (" +
                              v1::JobState_Name(array.state()) + ")");
  }
  // What is left and held, with `indices` taken out; nothing changes unless it is bounded.
  ArrayRanges left = array.array_left(), held = array.array_held();
  uint64_t dropped = 0;
  ArrayRanges removed;
  for (const auto& r : indices) {
    dropped += RemoveSpan(left, r.first(), r.last(), &removed);
    dropped += RemoveSpan(held, r.first(), r.last(), &removed);
  }
  if (left.size() + held.size() > static_cast<int>(ArrayLimits::kMaxRanges)) {
    return FailedPrecondition(Named(array) + ": cancelling these would leave more than " +
                              std::to_string(ArrayLimits::kMaxRanges) +
                              " ranges of indices; cancel wider slices");
  }
  std::vector<v1::JobRecord*> started;
  for (const auto& [id, job] : jobs_.jobs()) {
    if (job.array_parent() == array.id() && !IsTerminal(job.state()) &&
        InAny(indices, job.array_task_id())) {
      started.push_back(jobs_.Find(id));
    }
  }
  if (dropped == 0 && started.empty()) {
    return FailedPrecondition(Named(array) + " has no element left to cancel in " +
                              FormatArrayRanges(indices));
  }
  array.mutable_array_left()->Swap(&left);
  array.mutable_array_held()->Swap(&held);
  array.set_array_cancelled(array.array_cancelled() + static_cast<uint32_t>(dropped));
  if (dropped > 0) {
    array.set_array_note(std::to_string(dropped) + (dropped == 1 ? " element " : " elements ") +
                         "not started " + reason);
  }
  LOG(INFO) << "job " << array.id() << " (" << Named(array) << "): " << dropped
            << " elements not started and " << started.size() << " started " << reason;
  for (v1::JobRecord* element : started) SNN_RETURN_IF_ERROR(Cancel(*element, reason));
  dependencies_.ElementsCancelled(array, removed);
  jobs_.ArrayChanged(array, clock_.NowMs());
  writer_.Persist(array);
  request_schedule_();
  return Status::Ok();
}

Status JobLifecycle::HoldElements(v1::JobRecord& array, const ArrayRanges& indices, bool release) {
  if (array.state() != v1::PENDING) {
    return FailedPrecondition(Named(array) + " is " + v1::JobState_Name(array.state()) +
                              ": only elements not started are held");
  }
  ArrayRanges from = release ? array.array_held() : array.array_left();
  ArrayRanges to = release ? array.array_left() : array.array_held();
  ArrayRanges moved;
  uint64_t n = 0;
  for (const auto& r : indices) n += RemoveSpan(from, r.first(), r.last(), &moved);
  if (n == 0) {
    return FailedPrecondition(Named(array) + " has no element " +
                              (release ? "held" : "waiting to start") + " in " +
                              FormatArrayRanges(indices));
  }
  AddRanges(to, moved);
  if (from.size() + to.size() > static_cast<int>(ArrayLimits::kMaxRanges)) {
    return FailedPrecondition(Named(array) + ": this would leave more than " +
                              std::to_string(ArrayLimits::kMaxRanges) +
                              " ranges of indices; hold or release wider slices");
  }
  array.mutable_array_left()->Swap(release ? &to : &from);
  array.mutable_array_held()->Swap(release ? &from : &to);
  jobs_.ArrayChanged(array, clock_.NowMs());
  writer_.Persist(array);
  request_schedule_();
  return Status::Ok();
}

}  // namespace snn
