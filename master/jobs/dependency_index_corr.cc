// DependencyIndex's part for after_corr: element N of an array waits for element N of another.
#include <glog/logging.h>

#include "master/jobs/dependency_index.h"
#include "master/jobs/job_arrays.h"
#include "master/sched/dependency_kinds.h"

namespace snn {
namespace {

// At most this many elements of the awaited array are looked up at submit (those that started
// already); a later submit is refused with the reason.
constexpr uint64_t kMaxLookupsAtSubmit = 10'000;

// The runs of `spec`'s indices for which `include` holds, each as first..(the next index of
// `spec`) - 1, so that indices next to each other make one run (the last: first..last index).
template <typename Include>
ArrayRanges RunsWhere(const ArrayRanges& spec, Include include) {
  ArrayRanges runs;
  bool open = false;
  uint32_t start = 0, last = 0;
  for (const auto& r : spec) {
    for (uint64_t v = r.first(); v <= r.last(); v += r.step()) {
      const auto index = static_cast<uint32_t>(v);
      if (include(index)) {
        if (!open) start = index;
        open = true;
        last = index;
      } else if (open) {
        AddInterval(runs, start, index - 1);
        open = false;
      }
    }
  }
  if (open) AddInterval(runs, start, last);
  return runs;
}

// The run of `spec` that index `index` stands for.
ArrayRanges RunOf(const ArrayRanges& spec, uint32_t index) {
  ArrayRanges run;
  AddInterval(run, index, NextAfter(spec, index).value_or(index + 1) - 1);
  return run;
}

std::string Element(uint64_t array, uint32_t index) {
  return std::to_string(array) + "_" + std::to_string(index);
}

}  // namespace

std::optional<v1::JobRecord> DependencyIndex::FindJob(const std::string& tenant,
                                                      uint64_t tenant_job_id) {
  if (const v1::JobRecord* live = jobs_.FindByTenant(tenant, tenant_job_id)) return *live;
  auto stored = archive_.FindByTenant(tenant, tenant_job_id);
  if (!stored.ok() || !*stored) return std::nullopt;
  return std::move(**stored);
}

v1::JobState DependencyIndex::ElementState(const v1::JobRecord& awaited, uint32_t index) {
  if (Contains(awaited.array_left(), index) || Contains(awaited.array_held(), index)) {
    return IsTerminal(awaited.state()) ? v1::CANCELLED : v1::PENDING;
  }
  std::optional<v1::JobRecord> element =
      FindJob(awaited.tenant(), ElementTenantJobId(awaited, index));
  if (!element || element->array_parent() != awaited.id()) return v1::CANCELLED;
  return element->state();
}

Status DependencyIndex::CheckCorr(v1::JobRecord& job) {
  const v1::JobSpec& spec = job.spec();
  if (!spec.has_array()) {
    return InvalidArgument(
        "after_corr: only an array waits element by element (add array:, or use after_ok)");
  }
  if (spec.after_corr_size() > 1) return InvalidArgument("after_corr: at most one array");
  const uint64_t awaited_id = spec.after_corr(0);
  if (auto other = DependencyOn(spec, awaited_id)) {
    return InvalidArgument("depends: job " + std::to_string(awaited_id) + " is named twice (" +
                           DependencyName(*other) + ", after_corr); name it once");
  }
  std::optional<v1::JobRecord> awaited = FindJob(job.tenant(), awaited_id);
  if (!awaited) {
    return InvalidArgument("after_corr: tenant " + job.tenant() + " has no job " +
                           std::to_string(awaited_id));
  }
  if (!awaited->spec().has_array()) {
    return InvalidArgument("after_corr: job " + std::to_string(awaited_id) +
                           " is not an array; use after_ok");
  }
  const ArrayRanges& mine = spec.array().ranges();
  const ArrayRanges& theirs = awaited->spec().array().ranges();
  const ArrayRanges missing = RunsWhere(mine, [&](uint32_t i) { return !Contains(theirs, i); });
  if (!missing.empty()) {
    return InvalidArgument("after_corr: job " + std::to_string(awaited_id) + " has no element " +
                           std::to_string(missing[0].first()) +
                           " (its indices: " + FormatArrayRanges(theirs) +
                           "); element N of this array waits for its element N");
  }
  // What has left the awaited array's queue (started, or cancelled) is looked up.
  auto queued = [&](uint32_t i) {
    return !IsTerminal(awaited->state()) &&
           (Contains(awaited->array_left(), i) || Contains(awaited->array_held(), i));
  };
  const bool all_completed = awaited->state() == v1::COMPLETED;
  ArrayRanges settled;
  if (all_completed) {
    AddInterval(settled, mine.begin()->first(), mine.rbegin()->last());
  } else {
    uint64_t lookups = 0;
    std::string refused;
    settled = RunsWhere(mine, [&](uint32_t i) {
      if (!refused.empty() || queued(i)) return false;
      if (++lookups > kMaxLookupsAtSubmit) {
        refused = "after_corr: more than " + std::to_string(kMaxLookupsAtSubmit) +
                  " elements of job " + std::to_string(awaited_id) +
                  " have started already; submit this array before they do, or wait for the "
                  "whole array (after_ok)";
        return false;
      }
      const v1::JobState state = ElementState(*awaited, i);
      if (!IsTerminal(state)) return false;
      if (state != v1::COMPLETED) {
        refused = "after_corr: element " + Element(awaited_id, i) + " ended " +
                  v1::JobState_Name(state) + ", so element " + std::to_string(i) +
                  " of this array could never start; leave it out of the array";
      }
      return state == v1::COMPLETED;
    });
    if (!refused.empty()) return FailedPrecondition(refused);
  }
  *job.mutable_array_corr_settled() = std::move(settled);
  return Status::Ok();
}

void DependencyIndex::IndexCorr(const v1::JobRecord& job) {
  if (job.spec().after_corr_size() == 0 || job.state() != v1::PENDING) return;
  const v1::JobRecord* awaited = jobs_.FindByTenant(job.tenant(), job.spec().after_corr(0));
  if (awaited == nullptr || IsTerminal(awaited->state())) return;
  corr_dependents_[{job.tenant(), awaited->tenant_job_id()}].push_back(job.id());
}

void DependencyIndex::RecoverCorr() {
  std::vector<std::pair<std::string, uint64_t>> ended;
  for (const auto& [id, job] : jobs_.jobs()) {
    if (job.spec().after_corr_size() == 0 || job.state() != v1::PENDING) continue;
    const std::pair<std::string, uint64_t> key = {job.tenant(), job.spec().after_corr(0)};
    corr_dependents_[key].push_back(id);
    const v1::JobRecord* awaited = jobs_.FindByTenant(key.first, key.second);
    if (awaited == nullptr || IsTerminal(awaited->state())) ended.push_back(key);
  }
  // An awaited array's end settles its dependents in the same batch; one found ended here
  // (written by an older master) is settled now.
  for (const auto& key : ended) {
    std::optional<v1::JobRecord> awaited = FindJob(key.first, key.second);
    Settle({key.first, key.second, awaited ? awaited->state() : v1::CANCELLED, true, {}});
  }
}

void DependencyIndex::SettleRuns(v1::JobRecord& array, const ArrayRanges& runs, v1::JobState state,
                                 const std::string& reason) {
  if (runs.empty()) return;
  for (const auto& r : runs) AddInterval(*array.mutable_array_corr_settled(), r.first(), r.last());
  if (state == v1::COMPLETED) {
    // They may start; an array with nothing left to start stays out of the queue.
    if (!ArrayExhausted(array)) jobs_.views().Put(array);
    journal_.PutJob(array);
    request_schedule_();
    return;
  }
  Ending gone{array.tenant(), array.tenant_job_id(), v1::CANCELLED, false, {}};
  uint64_t dropped = 0;
  for (const auto& r : runs) {
    dropped += RemoveSpan(*array.mutable_array_left(), r.first(), r.last(), &gone.elements);
    dropped += RemoveSpan(*array.mutable_array_held(), r.first(), r.last(), &gone.elements);
  }
  array.set_array_cancelled(array.array_cancelled() + static_cast<uint32_t>(dropped));
  const std::string what =
      std::to_string(dropped) + (dropped == 1 ? " element " : " elements ") + reason;
  LOG(INFO) << "job " << array.id() << ": " << what;
  if (dropped > 0) {
    array.set_reason(what);
    array.set_array_note(what);
    Settle(std::move(gone));  // what waits on them in turn (after Settle's loop gets to it)
  }
  jobs_.ArrayChanged(array, clock_.NowMs());  // it may have ended with them
  writer_.Persist(array);
}

void DependencyIndex::SettleElements(const Ending& ended) {
  auto it = corr_dependents_.find({ended.tenant, ended.job});
  if (it == corr_dependents_.end()) return;
  const std::vector<uint64_t> waiting = it->second;  // SettleRuns may change the index
  const bool one = CountOf(ended.elements) == 1;
  const std::string reason = std::string("cancelled: ") + (one ? "element " : "elements ") +
                             std::to_string(ended.job) + "_" +
                             (one ? std::to_string(ended.elements[0].first())
                                  : "[" + FormatArrayRanges(ended.elements) + "]") +
                             " it depends on (after_corr) ended " + v1::JobState_Name(ended.state);
  for (uint64_t id : waiting) {
    v1::JobRecord* array = jobs_.Find(id);
    if (array == nullptr || array->state() != v1::PENDING) continue;
    const ArrayRanges& spec = array->spec().array().ranges();
    const ArrayRanges& settled = array->array_corr_settled();
    ArrayRanges runs;
    if (one) {
      const uint32_t i = ended.elements[0].first();
      if (Contains(spec, i) && !Contains(settled, i)) runs = RunOf(spec, i);
    } else {
      runs = RunsWhere(
          spec, [&](uint32_t i) { return Contains(ended.elements, i) && !Contains(settled, i); });
    }
    SettleRuns(*array, runs, ended.state, reason);
  }
}

void DependencyIndex::SettleArrayEnd(const std::pair<std::string, uint64_t>& awaited_key,
                                     v1::JobState state) {
  auto it = corr_dependents_.find(awaited_key);
  if (it == corr_dependents_.end()) return;
  const std::vector<uint64_t> waiting = std::move(it->second);
  corr_dependents_.erase(it);
  std::optional<v1::JobRecord> awaited = FindJob(awaited_key.first, awaited_key.second);
  for (uint64_t id : waiting) {
    v1::JobRecord* array = jobs_.Find(id);
    if (array == nullptr || array->state() != v1::PENDING) continue;
    // What its elements have not settled: each element that ended settled its index before
    // this (JobWriter hears an element's end before its array's); the others never started.
    // (A master recovering a store written otherwise finds how started ones ended.)
    const ArrayRanges& spec = array->spec().array().ranges();
    const ArrayRanges settled = array->array_corr_settled();
    auto end_of = [&](uint32_t i) { return awaited ? ElementState(*awaited, i) : v1::CANCELLED; };
    const ArrayRanges completed = RunsWhere(
        spec, [&](uint32_t i) { return !Contains(settled, i) && end_of(i) == v1::COMPLETED; });
    const ArrayRanges not_completed = RunsWhere(
        spec, [&](uint32_t i) { return !Contains(settled, i) && !Contains(completed, i); });
    SettleRuns(*array, completed, v1::COMPLETED, "");
    SettleRuns(*array, not_completed, v1::CANCELLED,
               "cancelled: their elements of job " + std::to_string(awaited_key.second) +
                   " (after_corr) never completed: it ended " + v1::JobState_Name(state));
  }
}

void DependencyIndex::ElementsCancelled(const v1::JobRecord& array, const ArrayRanges& indices) {
  if (corr_dependents_.empty() || indices.empty()) return;
  Settle({array.tenant(), array.tenant_job_id(), v1::CANCELLED, false, indices});
}

}  // namespace snn
