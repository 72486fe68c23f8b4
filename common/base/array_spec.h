// Job arrays (`array: "0-999999%64"`, as Slurm's --array): the indices of an array as a few
// ranges of evenly spaced numbers, whatever their count, and what is done to them (the next to
// start, a slice cancelled, held or released). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/status.h"
#include "proto/job.pb.h"

namespace snn {

struct ArrayLimits {
  static constexpr uint32_t kMaxIndex = 9'999'999;
  static constexpr uint64_t kMaxElements = 1'000'000;
  static constexpr size_t kMaxRanges = 256;  // in a spec, and in what cancels and holds leave
};

// "0-999999%64", "1,3,5-9:2%4": comma-separated N, A-B or A-B:STEP, then %K at most K elements
// running at once (none: no limit). Ranges may not overlap; they are kept in order.
Result<v1::ArraySpec> ParseArraySpec(std::string_view text);
// The same spec written back ("0-999999%64").
std::string FormatArrayRanges(const google::protobuf::RepeatedPtrField<v1::ArrayRange>& ranges);

// An element selection on the command line: "7" (every element), "7_5", "7_[100-200]" or
// "7_[1,3,5-9]"; the array's job ID, and the indices (empty: all).
struct ArraySelection {
  uint64_t job_id = 0;
  bool all = true;
  std::vector<v1::ArrayRange> ranges;
};
Result<ArraySelection> ParseArraySelection(std::string_view text);

// Ranges of indices, each first..last by step (first and last in the sequence).
using ArrayRanges = google::protobuf::RepeatedPtrField<v1::ArrayRange>;

uint64_t CountOf(const ArrayRanges& ranges);
bool Contains(const ArrayRanges& ranges, uint32_t index);
// The smallest index, removed; `ranges` must not be empty.
uint32_t PopFirst(ArrayRanges& ranges);
// Removes the indices in first..last (any step) from `ranges`; what was removed is appended to
// `removed` (may be null). Returns how many.
uint64_t RemoveSpan(ArrayRanges& ranges, uint32_t first, uint32_t last, ArrayRanges* removed);
// Adds `more` (disjoint from `ranges`), keeping the ranges in order.
void AddRanges(ArrayRanges& ranges, const ArrayRanges& more);

// Intervals: ranges of step 1, in order, neither overlapping nor touching (an after_corr
// array's settled indices).
// Adds first..last to `intervals`, merged with what it overlaps or touches.
void AddInterval(ArrayRanges& intervals, uint32_t first, uint32_t last);
// The smallest index of `ranges` (in order) that is in `intervals` (none: nullopt).
std::optional<uint32_t> FirstIn(const ArrayRanges& ranges, const ArrayRanges& intervals);
// How many indices of `ranges` are in `intervals`, counted up to `cap`.
uint64_t CountIn(const ArrayRanges& ranges, const ArrayRanges& intervals, uint64_t cap);
// The smallest index of `ranges` greater than `index` (none: nullopt).
std::optional<uint32_t> NextAfter(const ArrayRanges& ranges, uint32_t index);

// How users name a job: its number; "7_5" for element 5 of array 7; "7_[10-99%4]" for an array
// with indices left.
std::string JobName(const v1::JobRecord& job);

}  // namespace snn
