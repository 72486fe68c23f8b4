// Command-line flags for every program of the project: gflags, except that --help (or -h,
// -help) prints the program's usage and its own flags, not the hundred flags of the logging and
// flags libraries, and exits 0. (--helpfull still lists everything.)
#pragma once

namespace snn {

// Sets `usage` and parses the flags, removing them from argv; exits on --help.
void ParseProgramFlags(int* argc, char*** argv, const char* usage);

}  // namespace snn
