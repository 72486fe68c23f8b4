// Start-up shared by the daemons: flags (including --flagfile) and logging to stderr, which
// systemd's journal collects. Call once at the top of main().
#pragma once

#include <string>

#include "common/base/status.h"

namespace snn {

void InitDaemon(int* argc, char*** argv, const char* usage);

// Keeps freed memory in the process for reuse instead of handing it back to the kernel and
// faulting it in again: a master whose scheduling pass builds tens of megabytes of scratch
// each time pays those page faults on every pass otherwise (on a VM, more than the pass).
void KeepFreedMemory();

// Creates the daemon's --data_dir (and parents) if needed.
Status CreateDataDir(const std::string& dir);

}  // namespace snn
