#include "common/yaml_fields.h"

#include <algorithm>
#include <vector>

#include "common/utf8.h"

namespace snn {
namespace {

// Duplicate keys anywhere, and depth.
Status CheckTree(const YAML::Node& node, const std::string& what, int depth) {
  if (depth > 32) return InvalidArgument(what + " nests deeper than 32 levels");
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "(complex key)";
      if (!seen.insert(key).second) {
        return InvalidArgument(what + " has the key '" + key + "' twice (line " +
                               std::to_string(kv.first.Mark().line + 1) + ")");
      }
      SNN_RETURN_IF_ERROR(CheckTree(kv.second, what, depth + 1));
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) SNN_RETURN_IF_ERROR(CheckTree(item, what, depth + 1));
  }
  return Status::Ok();
}

// Nesting by brackets and indentation is what yaml-cpp recurses on: refuse absurd depth before
// parsing, so that a hostile file cannot exhaust the parser's stack.
bool TooDeep(const std::string& text) {
  int brackets = 0, most = 0;
  for (char c : text) {
    if (c == '[' || c == '{') most = std::max(most, ++brackets);
    if (c == ']' || c == '}') --brackets;
  }
  return most > 32;
}

}  // namespace

Result<YAML::Node> LoadYamlDocument(const std::string& text, const std::string& what) {
  size_t bad_at = 0;
  if (!ValidUtf8(text, bad_at)) {
    return InvalidArgument(what + " is not UTF-8 text (byte " + std::to_string(bad_at) + ")");
  }
  if (TooDeep(text)) return InvalidArgument(what + " nests deeper than 32 levels");
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.size() > 1) {
      return InvalidArgument(what + " holds " + std::to_string(docs.size()) +
                             " YAML documents; give one");
    }
    YAML::Node root = docs.empty() ? YAML::Node() : docs[0];
    SNN_RETURN_IF_ERROR(CheckTree(root, what, 0));
    return root;
  } catch (const YAML::Exception& e) {
    return InvalidArgument(what + " is not valid YAML: " + e.msg + " (line " +
                           std::to_string(e.mark.line + 1) + ")");
  }
}

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
