// Start-up shared by the daemons: flags (including --flagfile) and logging to stderr, which
// systemd's journal collects. Call once at the top of main().
#pragma once

#include <string>

#include "common/status.h"

namespace snn {

void InitDaemon(int* argc, char*** argv, const char* usage);

// Creates the daemon's --data_dir (and parents) if needed.
Status CreateDataDir(const std::string& dir);

}  // namespace snn
