// What every snnctl command shares below its session: the clock its timeouts and pauses run
// on, and how a failure is told (one line on stderr, exit code 1).
#pragma once

#include <ostream>

#include "common/base/clock.h"
#include "common/base/status.h"

namespace snn {

// The clock snnctl's timeouts and pauses run on.
inline const Clock& CliClock() {
  static const SystemClock clock;
  return clock;
}

inline int Fail(std::ostream& err, const Status& status) {
  err << "snnctl: " << status.message() << "\n";
  return 1;
}

}  // namespace snn
