// Reading workload traces in the Standard Workload Format (SWF), plain or gzip-compressed, with
// the replay conventions of ../shared/traces/README.md: jobs with a negative run time or no
// processor count are dropped; processors = allocated if known, else requested, capped at
// MaxProcs; the estimate is the requested time if given, else the run time, and never below the
// run time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace snn {

struct TraceJob {
  uint64_t id = 0;
  int64_t submit_s = 0;
  int64_t run_s = 0;
  int64_t estimate_s = 0;
  uint32_t procs = 0;
  int64_t user = -1;
};

struct Trace {
  uint32_t max_procs = 0;
  std::vector<TraceJob> jobs;  // in submit order
  uint64_t dropped = 0;        // by the conventions
  uint64_t bad_lines = 0;      // malformed lines skipped
};

// `skip_bad_lines` false: the first malformed line is an error naming its number.
Result<Trace> ReadSwf(const std::string& path, bool skip_bad_lines);
// The same from text already read (for tests).
Result<Trace> ParseSwf(const std::string& text, bool skip_bad_lines);

}  // namespace snn
