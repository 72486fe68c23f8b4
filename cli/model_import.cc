#include "cli/model_import.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "common/model/model.h"
#include "common/model/nir_dynamics.h"

extern char** environ;

namespace snn {
namespace {

std::string ReadAll(int fd, size_t limit) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < limit) out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// snn-nir-import beside this program (the build tree, or the bin directory it is installed in).
std::string HelperPath() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::path(".") : self.parent_path()) / "snn-nir-import";
}

Result<v1::Model> ImportNir(const std::string& path, double step_ms, const std::string& reset) {
  const std::string helper = HelperPath();
  if (access(helper.c_str(), X_OK) != 0) {
    return FailedPrecondition(
        "reading NIR files needs snn-nir-import (installed with snnctl), "
        "and " +
        helper + " is missing");
  }
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Internal("pipe: " + std::string(strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return Internal("pipe: " + std::string(strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::string binary = "--binary";
  std::string file = path;
  char step[64];
  std::snprintf(step, sizeof step, "--dt=%.17g", step_ms > 0 ? step_ms : 1.0);
  std::string reset_flag = "--reset=" + (reset.empty() ? std::string("subtract") : reset);
  char* argv[] = {const_cast<char*>(helper.c_str()),
                  binary.data(),
                  step,
                  reset_flag.data(),
                  file.data(),
                  nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, helper.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  std::string model_bytes, message;
  if (spawned == 0) {
    // A model is at most what a job may carry; more is an error the parse below reports.
    model_bytes = ReadAll(out[0], 64 << 20);
    message = ReadAll(err[0], 4096);
  }
  close(out[0]);
  close(err[0]);
  if (spawned != 0) return Internal("cannot run " + helper + ": " + strerror(spawned));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string line = message.substr(0, message.find('\n'));
    return InvalidArgument(line.empty() ? "snn-nir-import failed on " + path : line);
  }
  v1::Model model;
  if (!model.ParseFromString(model_bytes)) {
    return Internal("snn-nir-import gave a model snnctl cannot read (versions differ?)");
  }
  // Its note: which reset it assumed where the file is silent (unless the user chose one).
  if (reset.empty() && !message.empty()) std::cerr << "snnctl: " << message;
  return model;
}

}  // namespace

Result<v1::Model> LoadModelOfJob(const std::string& path, double step_ms,
                                 const std::string& reset) {
  if (LooksLikeNir(path)) {
    if (auto word = ParseNirReset(reset); !word.ok()) return word.status();
    return ImportNir(path, step_ms, reset);
  }
  if (step_ms > 0) {
    return InvalidArgument("--dt is for NIR models; " + path + " gives its own timestep_ms");
  }
  if (!reset.empty()) {
    return InvalidArgument("--reset (model_reset) is for NIR models; " + path +
                           " gives its own neurons' reset");
  }
  return LoadModelFile(path);
}

}  // namespace snn
