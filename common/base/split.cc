#include "common/base/split.h"

namespace snn {

std::vector<std::string> SplitList(std::string_view text, char separator, bool keep_empty) {
  std::vector<std::string> out;
  for (size_t from = 0; from <= text.size();) {
    size_t to = text.find(separator, from);
    if (to == std::string_view::npos) to = text.size();
    if (keep_empty || to > from) out.emplace_back(text.substr(from, to - from));
    from = to + 1;
  }
  return out;
}

}  // namespace snn
