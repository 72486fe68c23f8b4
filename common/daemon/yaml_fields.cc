#include "common/daemon/yaml_fields.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "common/base/utf8.h"

namespace snn {
namespace {

// Values a document may hold once its aliases are expanded: far above any real job, policy or
// boards file, far below what makes a walk over it take long (an alias bomb: each level refers
// to the one below ten times).
constexpr size_t kMaxYamlValues = 1'000'000;

// Duplicate keys anywhere, depth, and the size with aliases expanded (`visited` counts).
Status CheckTree(const YAML::Node& node, const std::string& what, int depth, size_t& visited) {
  if (depth > 32) return InvalidArgument(what + " nests deeper than 32 levels");
  if (++visited > kMaxYamlValues) {
    return InvalidArgument(what + " holds more than " + std::to_string(kMaxYamlValues) +
                           " values once its aliases (*name) are expanded");
  }
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "(complex key)";
      if (!seen.insert(key).second) {
        return InvalidArgument(what + " has the key '" + key + "' twice (line " +
                               std::to_string(kv.first.Mark().line + 1) + ")");
      }
      SNN_RETURN_IF_ERROR(CheckTree(kv.second, what, depth + 1, visited));
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) {
      SNN_RETURN_IF_ERROR(CheckTree(item, what, depth + 1, visited));
    }
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

// Counts a stream's documents without building them, and notices a parser that stops making
// progress: yaml-cpp 0.7 (Debian 12) returns empty documents forever on some garbage (a lone
// ","; fixed upstream in yaml-cpp PR 1319), which YAML::LoadAll turns into an endless loop
// that allocates without bound.
class DocumentCounter : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    stalled_ = documents_ > 0 && mark.pos == last_start_.pos && events_ == 0;
    last_start_ = mark;
    events_ = 0;
    ++documents_;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { ++events_; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    ++events_;
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    ++events_;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    ++events_;
  }
  void OnMapEnd() override {}

  int documents() const { return documents_; }
  bool stalled() const { return stalled_; }
  const YAML::Mark& last_start() const { return last_start_; }

 private:
  int documents_ = 0;
  int events_ = 0;
  bool stalled_ = false;
  YAML::Mark last_start_;
};

}  // namespace

Result<YAML::Node> LoadYamlDocument(const std::string& bytes, const std::string& what) {
  const TextOrError decoded = DecodeUnicodeText(bytes);
  if (!decoded.error.empty()) return InvalidArgument(what + " " + decoded.error);
  const std::string& text = decoded.text;
  size_t bad_at = 0;
  if (!ValidUtf8(text, bad_at)) {
    return InvalidArgument(what + " is not UTF-8 text (byte " + std::to_string(bad_at) + ")");
  }
  if (TooDeep(text)) return InvalidArgument(what + " nests deeper than 32 levels");
  try {
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentCounter counter;
    bool more = true;
    // Only whether there is more than one matters; a parser that stalls gives up here.
    while (more && counter.documents() < 2) more = parser.HandleNextDocument(counter);
    if (more && parser.HandleNextDocument(counter) && counter.stalled()) {
      return InvalidArgument(what + " is not valid YAML (line " +
                             std::to_string(counter.last_start().line + 1) + ")");
    }
    if (counter.documents() > 1) {
      return InvalidArgument(what + " holds " + std::to_string(counter.documents()) +
                             " YAML documents; give one");
    }
    YAML::Node root = YAML::Load(text);
    size_t visited = 0;
    SNN_RETURN_IF_ERROR(CheckTree(root, what, 0, visited));
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

Result<double> ReadNumber(const YAML::Node& node, const std::string& where, double lo, double hi) {
  try {
    const double v = node.as<double>();
    if (!(v >= lo && v <= hi)) {
      std::ostringstream range;
      range << where << " must be between " << lo << " and " << hi;
      return InvalidArgument(range.str());
    }
    return v;
  } catch (const YAML::Exception&) {
    return InvalidArgument(where + " must be a number");
  }
}

Result<std::map<std::string, uint32_t>> ReadCountMap(const YAML::Node& node,
                                                     const std::string& where, uint32_t hi,
                                                     size_t max_entries) {
  if (!node.IsMap()) return InvalidArgument(where + " must map names to counts");
  if (node.size() > max_entries) {
    return InvalidArgument(where + " has more than " + std::to_string(max_entries) + " entries");
  }
  std::map<std::string, uint32_t> out;
  for (const auto& kv : node) {
    const std::string name = kv.first.IsScalar() ? kv.first.as<std::string>() : "";
    const bool valid =
        !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        });
    if (!valid) {
      return InvalidArgument(where + ": '" + name.substr(0, 64) +
                             "' is not a name (1 to 64 letters, digits, '-', '_', '.')");
    }
    auto n = ReadWholeNumber(kv.second, where + "." + name, 1, hi);
    if (!n.ok()) return n.status();
    out[name] = static_cast<uint32_t>(*n);
  }
  return out;
}

}  // namespace snn
