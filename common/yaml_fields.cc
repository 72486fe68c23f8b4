#include "common/yaml_fields.h"

namespace snn {

Status CheckKnownFields(const YAML::Node& node, const std::string& where,
                        const std::set<std::string>& known) {
  if (!node.IsMap()) return InvalidArgument(where + " must be a mapping");
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (!known.count(key)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return InvalidArgument(where + " has an unknown field '" + key + "' (known: " + list + ")");
    }
  }
  return Status::Ok();
}

Result<int64_t> ReadWholeNumber(const YAML::Node& node, const std::string& where, int64_t lo,
                                int64_t hi) {
  int64_t v = 0;
  if (!node.IsScalar()) return InvalidArgument(where + " must be a whole number");
  try {
    v = node.as<int64_t>();
  } catch (const YAML::Exception&) {
    return InvalidArgument(where + " must be a whole number");
  }
  if (v < lo || v > hi) {
    return InvalidArgument(where + " is " + std::to_string(v) + "; it must be between " +
                           std::to_string(lo) + " and " + std::to_string(hi));
  }
  return v;
}

Result<std::string> ReadString(const YAML::Node& node, const std::string& where) {
  if (!node.IsScalar()) return InvalidArgument(where + " must be a string");
  return node.as<std::string>();
}

}  // namespace snn
