// snn-nir-import [--binary] [--dt=MS] [--reset=subtract|zero] [--limit-cpu-s=S]
// [--limit-memory-mb=M] FILE.nir: the model a NIR file
// makes at a step of MS milliseconds (default 1; see common/model/nir_model.h), its spiking layers
// that give no v_reset resetting as --reset says (default subtract: a line on standard error
// names those layers), as JSON on standard output, or with
// --binary as the protobuf that snnctl reads. snnctl runs it
// for NIR models so that it does not load HDF5 itself; people can use it to see what a NIR
// export becomes. The limits (the master's, for uploaded files) are set on this process before
// the file is opened. Errors: one line on standard error, exit code 1.
#include <google/protobuf/util/json_util.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "common/model/nir_model.h"

int main(int argc, char** argv) {
  bool binary = false;
  const char* path = nullptr;
  snn::NirOptions options;
  bool usage = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--binary") == 0) {
      binary = true;
    } else if (std::strncmp(argv[i], "--dt=", 5) == 0) {
      char* end = nullptr;
      options.step_ms = std::strtod(argv[i] + 5, &end);
      usage |= end == argv[i] + 5 || *end != '\0';
    } else if (std::strncmp(argv[i], "--reset=", 8) == 0) {
      auto reset = snn::ParseNirReset(argv[i] + 8);
      if (!reset.ok()) {
        std::cerr << reset.status().message() << "\n";
        return 2;
      }
      options.reset = *reset;
    } else if (std::strncmp(argv[i], "--limit-cpu-s=", 14) == 0 ||
               std::strncmp(argv[i], "--limit-memory-mb=", 18) == 0) {
      const bool cpu = argv[i][8] == 'c';
      const char* value = argv[i] + (cpu ? 14 : 18);
      char* end = nullptr;
      const unsigned long long n = std::strtoull(value, &end, 10);
      usage |= end == value || *end != '\0' || n == 0;
      const rlim_t limit = cpu ? n : n << 20;
      const rlimit bound{limit, limit};
      usage |= setrlimit(cpu ? RLIMIT_CPU : RLIMIT_AS, &bound) != 0;
    } else if (path == nullptr && argv[i][0] != '-') {
      path = argv[i];
    } else {
      path = nullptr;
      break;
    }
  }
  if (path == nullptr || usage) {
    std::cerr << "usage: snn-nir-import [--binary] [--dt=MS] [--reset=subtract|zero] "
                 "[--limit-cpu-s=S] [--limit-memory-mb=M] FILE.nir\n";
    return 2;
  }
  auto model = snn::LoadNirFile(path, options);
  if (!model.ok()) {
    std::cerr << model.status().message() << "\n";
    return 1;
  }
  // Say which reset is assumed where the file is silent (NIR readers differ on it).
  if (const auto silent = snn::MissingReset(*model); !silent.empty()) {
    std::cerr << "note: " << path << " gives no v_reset for layer"
              << (silent.size() > 1 ? "s " : " ") << silent[0];
    if (silent.size() > 1) std::cerr << " and " << silent.size() - 1 << " more";
    std::cerr << (silent.size() > 1 ? ": they reset" : ": it resets")
              << " by subtracting the threshold after a spike (snnTorch's and Rockpool's rule); "
                 "reset zero (--reset zero, or model_reset: zero in a job file) sets v to 0, as "
                 "the nir library reads such files\n";
  }
  if (binary) {
    return model->SerializeToOstream(&std::cout) && std::cout.flush() ? 0 : 1;
  }
  std::string json;
  google::protobuf::util::JsonPrintOptions json_options;
  json_options.add_whitespace = true;
  json_options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(*model, &json, json_options);
  std::cout << json;
  return 0;
}
