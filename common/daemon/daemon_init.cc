#include "common/daemon/daemon_init.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <google/protobuf/stubs/logging.h>
#include <malloc.h>

#include <csignal>
#include <filesystem>

#include "common/daemon/program_flags.h"

namespace snn {

void KeepFreedMemory() {
  // Blocks up to glibc's largest threshold (32 MiB) from the heap, not fresh mappings; and no
  // trimming of the heap's top.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, -1);
}

namespace {

// Protobuf's own complaints go to the log, except about what peers send: a request that does
// not parse is answered to its sender, and logging each would let any client fill the log.
void ProtobufLog(google::protobuf::LogLevel level, const char* file, int line,
                 const std::string& message) {
  if (message.find("invalid UTF-8") != std::string::npos) return;
  if (level >= google::protobuf::LOGLEVEL_ERROR) {
    LOG(ERROR) << "protobuf (" << file << ":" << line << "): " << message;
  } else {
    LOG(WARNING) << "protobuf (" << file << ":" << line << "): " << message;
  }
}

}  // namespace

void InitDaemon(int* argc, char*** argv, const char* usage) {
  ParseProgramFlags(argc, argv, usage);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
  std::signal(SIGPIPE, SIG_IGN);  // a peer that vanishes is an error value, not a signal
  google::protobuf::SetLogHandler(&ProtobufLog);
}

Status CreateDataDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Unavailable("cannot create --data_dir " + dir + ": " + ec.message());
  return Status::Ok();
}

}  // namespace snn
