#include "cli/shared_connection.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli/cli_basics.h"
#include "cli/connection_relay.h"
#include "common/base/duration.h"
#include "proto/rpc.pb.h"

namespace snn {

namespace {

constexpr uint64_t kDefaultIdleS = 600;
constexpr uint64_t kMaxIdleS = 7 * 86400;
// The relay waits for the master as long as any snnctl command may (--timeout is at most 1h).
constexpr std::chrono::milliseconds kUpstreamTimeout(3600 * 1000);

uint64_t Fnv1a(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

Result<std::string> PrivateDir(bool create) {
  const uid_t uid = geteuid();
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::string dir = runtime != nullptr && runtime[0] == '/'
                              ? std::string(runtime) + "/snnctl"
                              : "/tmp/snnctl-" + std::to_string(uid);
  if (create && mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return FailedPrecondition("cannot create " + dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return NotFound(dir + " does not exist");
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077) != 0) {
    return FailedPrecondition(dir +
                              " is not a directory of this user's closed to others (mode 0700); "
                              "remove it, or set XDG_RUNTIME_DIR to a private directory");
  }
  return dir;
}

std::string NoneOpen(const CliOptions& o) {
  return "no shared connection to " + o.master + " is open (snnctl connection start)";
}

// A client connected to the relay for `o`, or why not.
Result<std::unique_ptr<RpcClient>> ConnectToRelay(const CliOptions& o) {
  auto path = SharedConnectionSocket(o, /*create=*/false);
  if (!path.ok()) {
    return path.status().code() == Code::kNotFound ? NotFound(NoneOpen(o)) : path.status();
  }
  auto client = std::make_unique<RpcClient>(std::chrono::milliseconds(o.timeout_ms),
                                            kDefaultMaxFrameBytes, &CliClock());
  if (!client->ConnectLocal(*path).ok()) return NotFound(NoneOpen(o));
  return client;
}

// Holds `path`.lock while the relay lives: a second start finds it taken.
Result<int> LockFor(const std::string& path) {
  const int fd = open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return FailedPrecondition("cannot open " + path + ".lock: " + std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return AlreadyExists("");
  }
  return fd;
}

Result<int> Listen(const std::string& path) {
  sockaddr_un address{};
  if (path.size() >= sizeof(address.sun_path)) {
    return InvalidArgument(path +
                           " is too long for a Unix socket; set XDG_RUNTIME_DIR to a "
                           "shorter private directory");
  }
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  unlink(path.c_str());  // a relay that died without removing it (the lock says none lives)
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 ||
      chmod(path.c_str(), 0600) != 0 || listen(fd, 128) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    return FailedPrecondition("cannot listen on " + path + ": " + why);
  }
  return fd;
}

// In the child: detaches, tells the parent it is ready, serves until idle or stopped.
[[noreturn]] void BecomeRelay(RelayConfig config, int listen_fd, int ready_fd) {
  setsid();
  if (chdir("/") != 0) _exit(1);  // keeps no directory busy
  const int null = open("/dev/null", O_RDWR);
  for (int fd = 0; fd <= 2; ++fd) dup2(null, fd);
  if (null > 2) close(null);
  (void)!write(ready_fd, "ok", 2);
  close(ready_fd);
  RunConnectionRelay(config, listen_fd, CliClock());
  _exit(0);
}

}  // namespace

Result<std::string> SharedConnectionSocket(const CliOptions& o, bool create) {
  auto dir = PrivateDir(create);
  if (!dir.ok()) return dir.status();
  std::string ca = o.ca_file;
  char resolved[PATH_MAX];
  if (realpath(ca.c_str(), resolved) != nullptr) ca = resolved;
  char name[48];
  std::snprintf(name, sizeof(name), "master-%016llx.sock",
                static_cast<unsigned long long>(Fnv1a(o.master + '\n' + ca)));
  return *dir + "/" + name;
}

bool UseSharedConnection(const CliOptions& o, RpcClient& client) {
  auto path = SharedConnectionSocket(o, /*create=*/false);
  return path.ok() && client.ConnectLocal(*path).ok();
}

int ConnectionStart(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2) {
    return Fail(err, InvalidArgument("usage: snnctl connection start [--idle DURATION]"));
  }
  if (o.auth == "none") {
    return Fail(err, FailedPrecondition("a shared connection spares commands TLS; with --auth "
                                        "none there is none to spare"));
  }
  uint64_t idle_s = kDefaultIdleS;
  if (!o.setting("idle").empty()) {
    auto idle = ParseDurationSeconds(o.setting("idle"));
    if (!idle.ok() || *idle > kMaxIdleS) {
      return Fail(err, InvalidArgument("--idle must be a duration from 1s to 7d (e.g. 30m)"));
    }
    idle_s = *idle;
  }
  auto masters = ParseHostPortList(o.master);
  if (!masters.ok()) return Fail(err, InvalidArgument("--master: " + masters.status().message()));
  auto path = SharedConnectionSocket(o, /*create=*/true);
  if (!path.ok()) return Fail(err, path.status());
  auto lock = LockFor(*path);
  if (!lock.ok()) {
    if (lock.status().code() != Code::kAlreadyExists) return Fail(err, lock.status());
    return Fail(err, AlreadyExists("a shared connection to " + o.master +
                                   " is open already (snnctl connection status; stop it "
                                   "first with snnctl connection stop)"));
  }
  auto tls = MakeClientTls({o.ca_file, "", ""});
  if (!tls.ok()) {
    return Fail(err, Status(tls.status().code(),
                            tls.status().message() + " (set --ca-file or SNN_CA_FILE)"));
  }
  {  // The master must answer, and prove it is the master, before anything is shared.
    RpcClient first(std::chrono::milliseconds(o.timeout_ms), kDefaultMaxFrameBytes, &CliClock());
    first.set_tls(*tls);
    if (Status s = first.ConnectAny(*masters); !s.ok()) return Fail(err, s);
  }
  auto listen_fd = Listen(*path);
  if (!listen_fd.ok()) return Fail(err, listen_fd.status());
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0)
    return Fail(err, Internal("pipe: " + std::string(strerror(errno))));
  RelayConfig config;
  config.socket_path = *path;
  config.master = o.master;
  config.idle_ms = static_cast<int64_t>(idle_s) * 1000;
  config.connect = [tls = *tls, masters = *masters]() -> Result<std::unique_ptr<RpcClient>> {
    auto client = std::make_unique<RpcClient>(kUpstreamTimeout, kDefaultMaxFrameBytes, &CliClock());
    client->set_tls(tls);
    SNN_RETURN_IF_ERROR(client->ConnectAny(masters));
    return client;
  };
  out.flush();
  err.flush();
  const pid_t pid = fork();
  if (pid < 0) return Fail(err, Internal("fork: " + std::string(strerror(errno))));
  if (pid == 0) {
    close(ready[0]);
    BecomeRelay(std::move(config), *listen_fd, ready[1]);
  }
  close(ready[1]);
  close(*listen_fd);
  char said[2] = {};
  const bool up = read(ready[0], said, sizeof(said)) == 2;
  close(ready[0]);
  if (!up) return Fail(err, Internal("the shared connection's process ended at its start"));
  out << "Sharing connections to " << o.master << " through " << *path << " (pid " << pid
      << "); it ends after " << FormatDurationUnit(idle_s)
      << " with no command, or with snnctl connection stop\n";
  return 0;
}

int ConnectionStatus(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2) return Fail(err, InvalidArgument("usage: snnctl connection status"));
  auto relay = ConnectToRelay(o);
  if (!relay.ok()) return Fail(err, relay.status());
  auto status = (*relay)->CallRaw(kRelayStatusMethod, v1::Credential());
  if (!status.ok()) return Fail(err, status.status());
  out << "Shared connection: " << status->payload() << "\n";
  return 0;
}

int ConnectionStop(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2) return Fail(err, InvalidArgument("usage: snnctl connection stop"));
  auto relay = ConnectToRelay(o);
  if (!relay.ok()) return Fail(err, relay.status());
  auto stopped = (*relay)->CallRaw(kRelayStopMethod, v1::Credential());
  if (!stopped.ok()) return Fail(err, stopped.status());
  // Done when its process has ended: its lock is free then.
  const std::string path = *SharedConnectionSocket(o, /*create=*/false);
  const int64_t give_up_ms = CliClock().NowMs() + o.timeout_ms;
  while (true) {
    auto lock = LockFor(path);
    if (lock.ok()) {
      close(*lock);
      break;
    }
    if (CliClock().NowMs() >= give_up_ms) {
      return Fail(err, DeadlineExceeded("the shared connection to " + o.master +
                                        " was asked to stop but has not ended yet"));
    }
    CliClock().SleepMs(10);
  }
  out << "Stopped the shared connection to " << o.master << "\n";
  return 0;
}

}  // namespace snn
