// The CPU time processes of a benchmark have used, from /proc: for figures per request.
#pragma once

#include <sys/types.h>

namespace snn::bench {

// utime + stime of process `pid` (its threads included), in seconds; 0 if it cannot be read.
double CpuSeconds(pid_t pid);

}  // namespace snn::bench
