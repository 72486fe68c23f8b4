#include "nodeagent/drivers/driver_process.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "drivers/kit/driver_frames.h"
#include "drivers/kit/driver_loop.h"

namespace snn {

DriverProcess::DriverProcess(const Clock& clock, DriverProcessOptions options)
    : clock_(clock), options_(std::move(options)) {}

DriverProcess::~DriverProcess() { Stop(); }

Status DriverProcess::Spawn() {
  if (options_.argv.empty()) return InvalidArgument("no driver binary given");
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Unavailable(std::string("socketpair: ") + strerror(errno));
  }
  std::vector<char*> argv;
  for (const auto& a : options_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const char* log = options_.log_file.empty() ? "/dev/null" : options_.log_file.c_str();
  const pid_t pid = fork();
  if (pid < 0) {
    close(pair[0]);
    close(pair[1]);
    return Unavailable(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {                      // only async-signal-safe calls from here
    setpgid(0, 0);                     // the agent's group signals are not its
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // nor does it outlive the agent's thread that runs it
    const int out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 ||
        dup2(pair[1], kDriverFd) < 0) {
      _exit(127);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pair[1]);
  pid_ = pid;
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  fd_ = pair[0];
  ++starts_;
  last_start_ms_ = clock_.MonotonicMs();
  return Status::Ok();
}

Status DriverProcess::Start() {
  if (running()) return Status::Ok();
  if (starts_ > 0) {  // not again too soon: a driver that dies at once is not a busy loop
    backoff_ms_ = backoff_ms_ == 0 ? options_.min_backoff_ms
                                   : std::min(backoff_ms_ * 2, options_.max_backoff_ms);
    const int64_t wait = last_start_ms_ + backoff_ms_ - clock_.MonotonicMs();
    if (wait > 0) clock_.SleepMs(wait);
  }
  SNN_RETURN_IF_ERROR(Spawn());
  v1::DriverRequest hello;
  hello.mutable_hello()->set_protocol_version(kDriverProtocolVersion);
  hello.mutable_hello()->set_agent(options_.agent);
  hello.set_id(next_id_++);
  auto answer = Exchange(hello, options_.call_timeout_ms);
  if (!answer.ok()) {
    return Status(answer.status().code(), options_.argv[0] + ": " + answer.status().message());
  }
  if (!answer->error().empty()) {
    Stop();
    return FailedPrecondition(options_.argv[0] + ": " + answer->error());
  }
  hello_ = answer->hello();
  LOG(INFO) << "driver " << hello_.driver() << " (pid " << pid_ << ") runs boards of type "
            << hello_.board_type();
  return Status::Ok();
}

Result<v1::DriverResponse> DriverProcess::Exchange(const v1::DriverRequest& request,
                                                   int timeout_ms) {
  Status s = WriteDriverFrame(fd_, request, timeout_ms);
  v1::DriverResponse response;
  if (s.ok()) s = ReadDriverFrame(fd_, &response, timeout_ms);
  if (s.ok() && response.id() != request.id()) {
    s = InvalidArgument("the driver answered request " + std::to_string(response.id()) +
                        " to request " + std::to_string(request.id()));
  }
  if (!s.ok()) {
    LOG(WARNING) << "driver " << options_.argv[0] << " (pid " << pid_ << "): " << s.message()
                 << "; stopping it";
    Stop();
    return Unavailable("the driver failed: " + s.message());
  }
  return response;
}

Result<v1::DriverResponse> DriverProcess::Call(v1::DriverRequest request) {
  Status last;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (Status s = Start(); !s.ok()) {
      last = s;
      continue;
    }
    request.set_id(next_id_++);
    auto answer = Exchange(request, options_.call_timeout_ms);
    if (!answer.ok()) {
      last = answer.status();
      continue;
    }
    backoff_ms_ = 0;  // it answers: a later crash starts again at the shortest back-off
    if (!answer->error().empty()) return FailedPrecondition(answer->error());
    return answer;
  }
  return Unavailable(options_.argv[0] + ": " + last.message());
}

Status DriverProcess::Revive() {
  Stop();
  return Start();
}

void DriverProcess::Stop() {
  if (fd_ >= 0) {
    close(fd_);  // a driver exits when its connection closes
    fd_ = -1;
  }
  if (pid_ > 0) {
    if (pidfd_ >= 0) {
      syscall(SYS_pidfd_send_signal, pidfd_, SIGKILL, nullptr, 0);
      close(pidfd_);
      pidfd_ = -1;
    }
    waitpid(pid_, nullptr, 0);  // ECHILD if the agent's reaper took it first
    pid_ = -1;
  }
}

}  // namespace snn
