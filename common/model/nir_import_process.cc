#include "common/model/nir_import_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace snn {
namespace {

// Reads `fd` to its end, keeping at most `limit` bytes; `over` turns true if there was more.
std::string ReadAll(int fd, size_t limit, bool* over) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const size_t room = limit - std::min(limit, out.size());
    out.append(buf, std::min(room, static_cast<size_t>(n)));
    if (static_cast<size_t>(n) > room && over != nullptr) *over = true;
  }
  return out;
}

void CloseBoth(int fds[2]) {
  close(fds[0]);
  close(fds[1]);
}

// Every occurrence of `from` in `text` as `to`.
std::string Renamed(std::string text, const std::string& from, const std::string& to) {
  if (from.empty() || from == to) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

std::string NirImportBesideSelf() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const auto dir = self.parent_path();
  for (const auto& candidate : {dir / "snn-nir-import", dir.parent_path() / "cli/snn-nir-import"}) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

Result<NirImported> RunNirImport(const NirImportCall& call) {
  if (call.helper.empty() || access(call.helper.c_str(), X_OK) != 0) {
    return FailedPrecondition(
        "reading NIR files needs snn-nir-import (installed with snnctl)" +
        (call.helper.empty() ? std::string() : ", and " + call.helper + " is missing"));
  }
  const std::string& path = call.path;
  const std::string name = call.name.empty() ? path : call.name;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Internal("pipe: " + std::string(strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    CloseBoth(out);
    return Internal("pipe: " + std::string(strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  char step[64];
  std::snprintf(step, sizeof step, "--dt=%.17g", call.step_ms > 0 ? call.step_ms : 1.0);
  std::vector<std::string> args = {call.helper, "--binary", step,
                                   "--reset=" + (call.reset.empty() ? "subtract" : call.reset)};
  if (call.max_cpu_s > 0) args.push_back("--limit-cpu-s=" + std::to_string(call.max_cpu_s));
  if (call.max_memory_bytes > 0) {
    args.push_back("--limit-memory-mb=" + std::to_string(call.max_memory_bytes >> 20));
  }
  args.push_back(path);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, call.helper.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  std::string model_bytes, message;
  bool too_big = false;
  if (spawned == 0) {
    model_bytes = ReadAll(out[0], call.max_model_bytes, &too_big);
    message = ReadAll(err[0], 4096, nullptr);
  }
  close(out[0]);
  close(err[0]);
  if (spawned != 0) return Internal("cannot run " + call.helper + ": " + strerror(spawned));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  message = Renamed(std::move(message), path, name);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return InvalidArgument(name + ": reading it " +
                           (sig == SIGXCPU || sig == SIGKILL
                                ? "took more than " + std::to_string(call.max_cpu_s) +
                                      " s of CPU, the limit for a model"
                                : "failed (" + std::string(strsignal(sig)) + ")"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string line = message.substr(0, message.find('\n'));
    return InvalidArgument(line.empty() ? "snn-nir-import failed on " + name : line);
  }
  if (too_big) {
    return InvalidArgument(name + ": its network is more than " +
                           std::to_string(call.max_model_bytes) + " bytes, the limit for a model");
  }
  NirImported imported;
  if (!imported.model.ParseFromString(model_bytes)) {
    return Internal("snn-nir-import gave a model this program cannot read (versions differ?)");
  }
  imported.note = message;
  return imported;
}

}  // namespace snn
