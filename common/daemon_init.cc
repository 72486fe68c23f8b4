#include "common/daemon_init.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <csignal>
#include <filesystem>

namespace snn {

void InitDaemon(int* argc, char*** argv, const char* usage) {
  gflags::SetUsageMessage(usage);
  gflags::ParseCommandLineFlags(argc, argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
  std::signal(SIGPIPE, SIG_IGN);  // a peer that vanishes is an error value, not a signal
}

Status CreateDataDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Unavailable("cannot create --data_dir " + dir + ": " + ec.message());
  return Status::Ok();
}

}  // namespace snn
