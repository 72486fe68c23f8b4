// Reading workload traces in the Standard Workload Format (SWF), plain or gzip-compressed, as the
// Parallel Workloads Archive publishes them: `;` header lines (MaxProcs and the rest are kept),
// 18 numeric fields a job line, -1 for unknown, and decimals wherever they occur (an average CPU
// time of 552.21; a decimal in a field the replay uses counts its whole part, as
// int(float(x)) does). Only a really broken line is refused: a field count other than 18, or a
// field that is not a finite number, named with its line number; with `skip_bad_lines` such
// lines are counted and the first one's reason kept instead.
// The replay conventions of ../shared/traces/README.md, each drop counted by its reason: jobs
// with a negative run time, and jobs with no processor count (allocated, else requested), are
// dropped; processors are capped at MaxProcs; the estimate is the requested time if given, else
// the run time, and never below the run time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/status.h"

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
  uint32_t max_procs = 0;  // the header's MaxProcs; without one, the widest job's processors
  bool max_procs_in_header = false;
  std::map<std::string, std::string> header;  // "; Key: value" lines, the first of each key
  std::vector<TraceJob> jobs;                 // kept, in submit order
  uint64_t job_lines = 0;                     // job lines read (kept, dropped and bad)
  uint64_t dropped_run_time = 0;              // dropped: negative (unknown) run time
  uint64_t dropped_procs = 0;                 // dropped: no processor count
  uint64_t capped = 0;                        // kept, with their processors capped at MaxProcs
  uint64_t decimal_fields = 0;                // fields written with a fraction, in any line
  uint64_t bad_lines = 0;                     // broken lines skipped
  std::string first_bad_line;                 // the first one's reason

  uint64_t dropped() const { return dropped_run_time + dropped_procs; }
};

// `skip_bad_lines` false: the first broken line is an error naming its number.
Result<Trace> ReadSwf(const std::string& path, bool skip_bad_lines);
// The same from text already read (for tests).
Result<Trace> ParseSwf(std::string_view text, bool skip_bad_lines);

}  // namespace snn
