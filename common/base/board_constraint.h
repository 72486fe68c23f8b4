// A job's board constraint (`constraints: "rev >= 3 && firmware == '2.4'"`): a small boolean
// language over the attributes a board reports (its driver's, or its boards file's
// `attributes:`), with `type` and `node` built in. docs/user-guide.md, "Board constraints",
// states the rules:
//
//   expr    := or          or := and ('||' and)*      and := unary ('&&' unary)*
//   unary   := '!' unary | '(' expr ')' | NAME op value | NAME 'in' '[' value (',' value)* ']'
//   op      := '==' | '!=' | '<' | '<=' | '>' | '>='
//   value   := a number (3, -1.5, 2e3) | 'text' | "text" | a bare word (letters, digits, . _ -)
//
// Equality (==, !=, in) compares numbers as numbers when both sides are numbers ("3.0" == 3),
// text as text otherwise. An order (<, <=, >, >=) compares an unquoted number as a number, and
// a quoted version ('2.10': digits separated by dots) part by part ('2.10' > '2.4'); any other
// value cannot be ordered and is refused when parsed. A board without the attribute, or whose
// value is not of the literal's kind, fails the comparison (and `!` of it holds).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/status.h"

namespace snn {

// A board's attribute by name, if it has it.
using AttributeLookup = std::function<std::optional<std::string_view>(std::string_view)>;

class BoardConstraint {
 public:
  static constexpr size_t kMaxLength = 1024;  // characters
  static constexpr size_t kMaxTerms = 64;     // comparisons and operators together

  // The constraint, or one line saying what is wrong and where (its character position).
  static Result<BoardConstraint> Parse(std::string_view text);

  bool Matches(const AttributeLookup& attribute) const;
  // The attribute names it compares, each once, in order of first use.
  const std::vector<std::string>& names() const { return names_; }

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
  std::vector<std::string> names_;
};

// A board reports at most this many attributes.
inline constexpr size_t kMaxBoardAttributes = 64;
// Whether `name: value` may be a board attribute: a name a constraint can write (letters,
// digits, '_' and '-', not starting with a digit or '-'; not `type` or `node`, which are built
// in), and a value of at most 256 characters without control characters.
Status CheckBoardAttribute(std::string_view name, std::string_view value);

// The parsed form of `text`, kept per thread for the scheduler's many evaluations (null: it
// does not parse, and matches no board).
const BoardConstraint* CompiledConstraint(const std::string& text);

}  // namespace snn
