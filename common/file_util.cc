#include "common/file_util.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace snn {

Result<std::string> ReadWholeFile(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(what + " " + path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument(what + " " + path + " is a directory");
  }
  std::ifstream in(path);
  if (!in) return InvalidArgument(what + " " + path + " cannot be read (permission denied?)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return InvalidArgument(what + " " + path + ": read error");
  return buffer.str();
}

}  // namespace snn
