// snnctl: the user and admin command line of the SNN cluster resource manager.
#include <openssl/crypto.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/snnctl.h"

int main(int argc, char** argv) {
  // One short process per command: OpenSSL's clean-up at exit only frees memory the exit frees
  // anyway, and costs as much as a handshake.
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
  std::vector<std::string> args(argv + 1, argv + argc);
  auto options = snn::ParseCliArgs(args);
  if (!options.ok()) {
    std::cerr << "snnctl: " << options.status().message() << "\n";
    return 2;
  }
  // Only a master run with --auth=none believes this name; otherwise MUNGE proves the uid.
  if (const passwd* pw = getpwuid(geteuid())) {
    options->user = pw->pw_name;
  } else if (const char* user = std::getenv("USER")) {
    options->user = user;
  } else {
    options->user = "uid" + std::to_string(geteuid());
  }
  return snn::RunCli(*options, std::cout, std::cerr);
}
