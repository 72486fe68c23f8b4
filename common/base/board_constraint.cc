#include "common/base/board_constraint.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <unordered_map>

namespace snn {
namespace {

constexpr size_t kMaxDepth = 32;  // nested parentheses and `!`

bool NameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}
bool WordChar(char c) { return NameChar(c) || c == '.' || c == '+'; }

std::optional<double> Number(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Digits separated by single dots: "2", "2.10", "1.0.3".
std::optional<std::vector<uint64_t>> Version(std::string_view s) {
  std::vector<uint64_t> parts;
  size_t i = 0;
  while (true) {
    uint64_t part = 0;
    auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), part);
    if (ec != std::errc() || p == s.data() + i) return std::nullopt;
    parts.push_back(part);
    i = static_cast<size_t>(p - s.data());
    if (i == s.size()) return parts;
    if (s[i] != '.' || parts.size() >= 16) return std::nullopt;
    ++i;
  }
}

// A UTC time as ISO 8601 writes it: "2026-11-28", "2026-11-28T03:00", "2026-11-28T03:00:12Z";
// as "YYYY-MM-DDTHH:MM:SS" (a date is its midnight), which sorts as text in time order.
std::optional<std::string> IsoTime(std::string_view s) {
  if (!s.empty() && s.back() == 'Z') s.remove_suffix(1);
  static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd";
  if (s.size() != 10 && s.size() != 16 && s.size() != 19) return std::nullopt;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool digit = s[i] >= '0' && s[i] <= '9';
    if (kShape[i] == 'd' ? !digit : s[i] != kShape[i]) return std::nullopt;
  }
  std::string out(s);
  if (out.size() == 10) out += "T00:00";
  if (out.size() == 16) out += ":00";
  return out;
}

int CompareVersions(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const uint64_t x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

enum class Op { kEq, kNe, kLt, kLe, kGt, kGe, kIn };

struct Value {
  std::string text;
  std::optional<double> number;                  // an unquoted number
  std::optional<std::vector<uint64_t>> version;  // an unquoted dotted or a quoted version
  std::optional<std::string> time;               // a quoted UTC time (IsoTime)
};

}  // namespace

struct BoardConstraint::Node {
  enum class Kind { kAnd, kOr, kNot, kCompare } kind = Kind::kCompare;
  std::shared_ptr<const Node> left, right;  // kNot: left only
  std::string name;
  Op op = Op::kEq;
  std::vector<Value> values;  // one, or the list of `in`

  bool Holds(const AttributeLookup& attribute) const {
    switch (kind) {
      case Kind::kAnd:
        return left->Holds(attribute) && right->Holds(attribute);
      case Kind::kOr:
        return left->Holds(attribute) || right->Holds(attribute);
      case Kind::kNot:
        return !left->Holds(attribute);
      case Kind::kCompare:
        break;
    }
    const std::optional<std::string_view> have = attribute(name);
    if (!have) return false;
    if (op == Op::kEq || op == Op::kNe || op == Op::kIn) {
      bool equal = false;
      for (const Value& v : values) {
        if (v.number) {
          const auto n = Number(*have);
          equal = n ? *n == *v.number : *have == v.text;
        } else {
          equal = *have == v.text;
        }
        if (equal) break;
      }
      return op == Op::kNe ? !equal : equal;
    }
    const Value& v = values.front();
    int order = 0;
    if (v.number) {
      const auto n = Number(*have);
      if (!n) return false;
      order = *n < *v.number ? -1 : (*n > *v.number ? 1 : 0);
    } else if (v.time) {
      const auto mine = IsoTime(*have);
      if (!mine) return false;
      order = mine->compare(*v.time) < 0 ? -1 : (*mine == *v.time ? 0 : 1);
    } else {
      const auto mine = Version(*have);
      if (!mine) return false;
      order = CompareVersions(*mine, *v.version);
    }
    switch (op) {
      case Op::kLt:
        return order < 0;
      case Op::kLe:
        return order <= 0;
      case Op::kGt:
        return order > 0;
      default:
        return order >= 0;
    }
  }
};

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Result<std::shared_ptr<const BoardConstraint::Node>> Whole(std::vector<std::string>& names) {
    names_ = &names;
    auto root = Or(0);
    if (!root.ok()) return root;
    Skip();
    if (i_ < s_.size()) return Error("expected '&&', '||' or the end");
    return root;
  }

 private:
  using NodePtr = std::shared_ptr<const BoardConstraint::Node>;
  using Node = BoardConstraint::Node;

  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Eat(std::string_view token) {
    Skip();
    if (s_.substr(i_, token.size()) != token) return false;
    i_ += token.size();
    return true;
  }
  Status Error(const std::string& what) const {
    std::string found = i_ >= s_.size() ? "the end" : "'" + std::string(s_.substr(i_, 8)) + "'";
    if (i_ < s_.size() && s_.size() - i_ > 8) found.insert(found.size() - 1, "...");
    return InvalidArgument("constraints: " + what + " at character " + std::to_string(i_ + 1) +
                           ", found " + found);
  }
  Status Term() {
    if (++terms_ > BoardConstraint::kMaxTerms) {
      return InvalidArgument("constraints: more than " +
                             std::to_string(BoardConstraint::kMaxTerms) +
                             " comparisons and operators");
    }
    return Status::Ok();
  }

  Result<NodePtr> Binary(size_t depth, Node::Kind kind) {
    const bool is_or = kind == Node::Kind::kOr;
    auto left = is_or ? Binary(depth, Node::Kind::kAnd) : Unary(depth);
    if (!left.ok()) return left;
    NodePtr node = *left;
    while (Eat(is_or ? "||" : "&&")) {
      SNN_RETURN_IF_ERROR(Term());
      auto right = is_or ? Binary(depth, Node::Kind::kAnd) : Unary(depth);
      if (!right.ok()) return right;
      auto joined = std::make_shared<Node>();
      joined->kind = kind;
      joined->left = node;
      joined->right = *right;
      node = joined;
    }
    return node;
  }
  Result<NodePtr> Or(size_t depth) { return Binary(depth, Node::Kind::kOr); }

  Result<NodePtr> Unary(size_t depth) {
    if (depth > kMaxDepth) return Error("more than 32 levels of '!' and parentheses");
    Skip();
    if (i_ < s_.size() && s_[i_] == '!' && s_.substr(i_, 2) != "!=") {
      ++i_;
      SNN_RETURN_IF_ERROR(Term());
      auto inner = Unary(depth + 1);
      if (!inner.ok()) return inner;
      auto node = std::make_shared<Node>();
      node->kind = Node::Kind::kNot;
      node->left = *inner;
      return NodePtr(node);
    }
    if (Eat("(")) {
      auto inner = Or(depth + 1);
      if (!inner.ok()) return inner;
      if (!Eat(")")) return Error("expected ')'");
      return inner;
    }
    return Compare();
  }

  Result<NodePtr> Compare() {
    SNN_RETURN_IF_ERROR(Term());
    Skip();
    if (i_ >= s_.size() || !NameStart(s_[i_])) {
      return Error("expected an attribute name (a comparison: NAME op value)");
    }
    auto node = std::make_shared<Node>();
    const size_t start = i_;
    while (i_ < s_.size() && NameChar(s_[i_])) ++i_;
    node->name = std::string(s_.substr(start, i_ - start));
    if (std::find(names_->begin(), names_->end(), node->name) == names_->end()) {
      names_->push_back(node->name);
    }
    Skip();
    static constexpr std::pair<std::string_view, Op> kOps[] = {{"==", Op::kEq}, {"!=", Op::kNe},
                                                               {"<=", Op::kLe}, {">=", Op::kGe},
                                                               {"<", Op::kLt},  {">", Op::kGt}};
    bool found = false;
    for (const auto& [token, op] : kOps) {
      if (Eat(token)) {
        node->op = op;
        found = true;
        break;
      }
    }
    if (!found) {
      if (s_.substr(i_, 2) == "in" && (i_ + 2 == s_.size() || !NameChar(s_[i_ + 2]))) {
        i_ += 2;
        node->op = Op::kIn;
        if (!Eat("[")) return Error("expected '[' after in");
        do {
          auto v = ParseValue(false);
          if (!v.ok()) return v.status();
          node->values.push_back(std::move(*v));
          if (node->values.size() > BoardConstraint::kMaxTerms) {
            return Error("more than 64 values in one list");
          }
        } while (Eat(","));
        if (!Eat("]")) return Error("expected ',' or ']'");
        return NodePtr(node);
      }
      return Error("expected ==, !=, <, <=, >, >= or in after '" + node->name + "'");
    }
    const bool ordered = node->op != Op::kEq && node->op != Op::kNe;
    auto v = ParseValue(ordered);
    if (!v.ok()) return v.status();
    node->values.push_back(std::move(*v));
    return NodePtr(node);
  }

  // A literal; for an order (`ordered`), only a number or a version.
  Result<Value> ParseValue(bool ordered) {
    Skip();
    const size_t start = i_;
    Value v;
    if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"')) {
      const char quote = s_[i_];
      const size_t end = s_.find(quote, i_ + 1);
      if (end == std::string_view::npos) return Error("a quoted value is not closed");
      v.text = std::string(s_.substr(i_ + 1, end - i_ - 1));
      i_ = end + 1;
      v.version = Version(v.text);
      if (!v.version) v.time = IsoTime(v.text);
    } else {
      while (i_ < s_.size() && WordChar(s_[i_])) ++i_;
      if (i_ == start) return Error("expected a value (a number, 'text' or a word)");
      v.text = std::string(s_.substr(start, i_ - start));
      v.number = Number(v.text);
      if (!v.number) v.version = Version(v.text);
    }
    if (ordered && !v.number && !v.version && !v.time) {
      i_ = start;
      return Error(
          "<, <=, > and >= compare numbers (3), versions ('2.10') or UTC times ('2026-11-28', "
          "'2026-11-28T03:00Z'); '" +
          v.text + "' is none of them");
    }
    return v;
  }

  std::string_view s_;
  size_t i_ = 0;
  size_t terms_ = 0;
  std::vector<std::string>* names_ = nullptr;
};

}  // namespace

Result<BoardConstraint> BoardConstraint::Parse(std::string_view text) {
  if (text.size() > kMaxLength) {
    return InvalidArgument("constraints: longer than " + std::to_string(kMaxLength) +
                           " characters");
  }
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
      return InvalidArgument("constraints: a control character is not allowed");
    }
  }
  BoardConstraint constraint;
  Parser parser(text);
  auto root = parser.Whole(constraint.names_);
  if (!root.ok()) return root.status();
  constraint.root_ = std::move(*root);
  return constraint;
}

bool BoardConstraint::Matches(const AttributeLookup& attribute) const {
  return root_ != nullptr && root_->Holds(attribute);
}

Status CheckBoardAttribute(std::string_view name, std::string_view value) {
  const std::string shown(name.substr(0, 64));
  if (name.empty() || name.size() > 64 || !NameStart(name[0]) ||
      !std::all_of(name.begin(), name.end(), NameChar)) {
    return InvalidArgument("attribute '" + shown +
                           "': a name is 1 to 64 letters, digits, '_' or '-', starting with a "
                           "letter or '_'");
  }
  if (name == "type" || name == "node") {
    return InvalidArgument("attribute '" + shown + "' is built in (the board's " + shown + ")");
  }
  if (value.size() > 256 || std::any_of(value.begin(), value.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      })) {
    return InvalidArgument("attribute '" + shown +
                           "': a value is at most 256 characters, none of them control characters");
  }
  return Status::Ok();
}

const BoardConstraint* CompiledConstraint(const std::string& text) {
  thread_local std::unordered_map<std::string, std::optional<BoardConstraint>> cache;
  auto it = cache.find(text);
  if (it == cache.end()) {
    if (cache.size() >= 4096) cache.clear();  // bounded: distinct constraints are few
    auto parsed = BoardConstraint::Parse(text);
    it = cache.emplace(text, parsed.ok() ? std::optional(std::move(*parsed)) : std::nullopt).first;
  }
  return it->second ? &*it->second : nullptr;
}

}  // namespace snn
