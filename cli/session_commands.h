// snnctl alloc and snnctl run: interactive sessions. `alloc` asks for resources as a session,
// waits until they are granted, prints where and the environment to use, and (unless
// --detach) stays, renewing the session every third of its keepalive, until it is interrupted:
// then it releases the session. A client that dies stops renewing, and the master ends the
// session after its keepalive. `alloc --renew ID` renews a session once. `run --alloc ID CMD`
// runs a step in a session, waits for it, prints its output and exits with its exit code.
#pragma once

#include <ostream>

#include "cli/cli_options.h"

namespace snn {

int Alloc(const CliOptions& o, std::ostream& out, std::ostream& err);
int Run(const CliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace snn
