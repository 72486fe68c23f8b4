// One board driver process as the agent runs it (proto/driver.proto): started with a stream
// socket on fd 3 in a process group of its own, greeted, then asked one request at a time with
// a deadline. A driver that dies, breaks the protocol or does not answer in time is killed and
// started again, no sooner than its back-off (doubling from min to max, on the injected clock;
// reset by a good answer), and the request is asked once more: every operation is idempotent.
// The boards keep their state (in the boards, or in the driver's state dir) across restarts.
// Thread contract: one thread at a time (the agent's driver thread, not its io thread: calls
// block for as long as a board takes to boot).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/status.h"
#include "proto/driver.pb.h"

namespace snn {

struct DriverProcessOptions {
  std::vector<std::string> argv;    // the driver binary and its flags
  std::string log_file;             // its stdout and stderr (appended)
  std::string agent = "snn-agent";  // how the hello names the agent
  int call_timeout_ms = 180000;     // longer than any boot
  int64_t min_backoff_ms = 100;
  int64_t max_backoff_ms = 5000;
};

class DriverProcess {
 public:
  DriverProcess(const Clock& clock, DriverProcessOptions options);
  ~DriverProcess();  // closes the connection (the driver exits), SIGKILL if it does not
  DriverProcess(const DriverProcess&) = delete;
  DriverProcess& operator=(const DriverProcess&) = delete;

  // Starts the driver (if it is not running) and greets it.
  Status Start();
  // Asks `request` (its id is set here). A driver's refusal: FailedPrecondition with its line.
  // A driver that failed twice (crashed, hung, garbled): Unavailable; it is stopped, and the
  // next call starts it again after its back-off.
  Result<v1::DriverResponse> Call(v1::DriverRequest request);

  bool running() const { return fd_ >= 0; }
  // Readable once the driver process exits (-1: none is running).
  int exit_fd() const { return pidfd_; }
  // After it exited on its own (exit_fd readable): starts it again, after its back-off.
  Status Revive();
  pid_t pid() const { return pid_; }
  const v1::DriverHelloReply& hello() const { return hello_; }
  int starts() const { return starts_; }

 private:
  Status Spawn();
  // One exchange; a failure of the connection stops the driver.
  Result<v1::DriverResponse> Exchange(const v1::DriverRequest& request, int timeout_ms);
  void Stop();

  const Clock& clock_;
  const DriverProcessOptions options_;
  pid_t pid_ = -1;
  int pidfd_ = -1;  // signals reach this process, never one that reused its pid
  int fd_ = -1;
  uint64_t next_id_ = 1;
  v1::DriverHelloReply hello_;
  int starts_ = 0;
  int64_t last_start_ms_ = 0;
  int64_t backoff_ms_ = 0;
};

}  // namespace snn
