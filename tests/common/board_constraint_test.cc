// The board constraint language (issue 40): what it accepts, how it compares numbers, text and
// versions, that a missing attribute fails a comparison, and the one-line errors it gives.
#include "common/base/board_constraint.h"

#include <gtest/gtest.h>

#include <map>

namespace snn {
namespace {

bool Holds(const std::string& text, const std::map<std::string, std::string>& attributes) {
  auto parsed = BoardConstraint::Parse(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
  if (!parsed.ok()) return false;
  return parsed->Matches([&](std::string_view name) -> std::optional<std::string_view> {
    auto it = attributes.find(std::string(name));
    if (it == attributes.end()) return std::nullopt;
    return std::string_view(it->second);
  });
}

std::string ErrorOf(const std::string& text) {
  auto parsed = BoardConstraint::Parse(text);
  EXPECT_FALSE(parsed.ok()) << text;
  return parsed.ok() ? "" : parsed.status().message();
}

TEST(BoardConstraintTest, ComparesNumbersTextAndVersions) {
  const std::map<std::string, std::string> board{
      {"rev", "3"}, {"firmware", "2.10"}, {"serial", "A-17"}, {"type", "loihi"}};
  EXPECT_TRUE(Holds("rev >= 3 && firmware == '2.10'", board));
  EXPECT_FALSE(Holds("rev > 3", board));
  EXPECT_TRUE(Holds("rev == 3.0", board));         // numbers as numbers
  EXPECT_FALSE(Holds("rev == '3.0'", board));      // quoted: text
  EXPECT_TRUE(Holds("firmware > '2.4'", board));   // versions part by part
  EXPECT_FALSE(Holds("firmware > 2.4", board));    // 2.10 is the number 2.1
  EXPECT_TRUE(Holds("firmware >= 1.9.3", board));  // an unquoted dotted word is a version
  EXPECT_TRUE(Holds("serial == A-17 && type in [spinnaker, loihi]", board));
  EXPECT_FALSE(Holds("type in ['spinnaker', \"brainscales\"]", board));
  EXPECT_TRUE(Holds("!(rev < 2) || missing == 1", board));
  EXPECT_TRUE(Holds("rev == 1 || rev == 2 || rev == 3", board));
  EXPECT_TRUE(Holds("rev == 3 && (firmware == '2.4' || serial != B)", board));
  EXPECT_FALSE(Holds("rev == 3 && firmware == '2.4' || serial == B", board));  // && binds first
  // A board without the attribute fails every comparison on it; `!` of that holds.
  EXPECT_FALSE(Holds("calibrated_at >= 5", board));
  EXPECT_FALSE(Holds("calibrated_at != 5", board));
  EXPECT_TRUE(Holds("!(calibrated_at == 5)", board));
  // A value of another kind than the literal fails an order.
  EXPECT_FALSE(Holds("serial > 3", board));
}

TEST(BoardConstraintTest, ComparesUtcTimesInTimeOrderWhateverTheirPrecision) {
  // As sets_attribute writes them: a calibration at 03:00:12 on 28 November.
  const std::map<std::string, std::string> board{{"calibrated_at", "2026-11-28T03:00:12Z"},
                                                 {"serial", "A-17"}};
  EXPECT_TRUE(Holds("calibrated_at >= '2026-11-28'", board));  // a date is its midnight
  EXPECT_FALSE(Holds("calibrated_at < '2026-11-28'", board));
  EXPECT_TRUE(Holds("calibrated_at > '2026-11-28T03:00Z'", board));  // not as text ('Z' > ':')
  EXPECT_FALSE(Holds("calibrated_at >= '2026-11-28T03:01'", board));
  EXPECT_TRUE(Holds("calibrated_at <= '2026-11-28T03:00:12Z'", board));
  EXPECT_FALSE(Holds("serial >= '2026-11-28'", board));  // not a time: fails the order
  EXPECT_FALSE(Holds("calibrated_at > '2026-12-01'", board));
}

TEST(BoardConstraintTest, NamesWhatItCompares) {
  auto parsed = BoardConstraint::Parse("rev >= 3 && (firmware == '2.4' || rev < 9)");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->names(), (std::vector<std::string>{"rev", "firmware"}));
}

TEST(BoardConstraintTest, BadConstraintsGetOneLineSayingWhere) {
  EXPECT_EQ(ErrorOf("rev >= 3 &&"),
            "constraints: expected an attribute name (a comparison: NAME op value) at character "
            "12, found the end");
  EXPECT_EQ(ErrorOf("rev = 3"),
            "constraints: expected ==, !=, <, <=, >, >= or in after 'rev' at character 5, found "
            "'= 3'");
  EXPECT_EQ(ErrorOf("firmware > 'beta'"),
            "constraints: <, <=, > and >= compare numbers (3), versions ('2.10') or UTC times "
            "('2026-11-28', '2026-11-28T03:00Z'); 'beta' is none of them at character 12, found "
            "''beta''");
  EXPECT_EQ(ErrorOf("(rev == 3"), "constraints: expected ')' at character 10, found the end");
  EXPECT_EQ(ErrorOf("rev == 'open"),
            "constraints: a quoted value is not closed at character 8, found ''open'");
  EXPECT_EQ(ErrorOf("rev in 1, 2"),
            "constraints: expected '[' after in at character 8, found '1, 2'");
  EXPECT_EQ(ErrorOf("rev == 3 rev == 4"),
            "constraints: expected '&&', '||' or the end at character 10, found 'rev == 4'");
  EXPECT_EQ(ErrorOf(""),
            "constraints: expected an attribute name (a comparison: NAME op value) at character "
            "1, found the end");
  EXPECT_EQ(ErrorOf("rev == 3\n"), "constraints: a control character is not allowed");
  // Bounded: no deep recursion, no huge trees.
  EXPECT_NE(ErrorOf(std::string(40, '(') + "rev == 3" + std::string(40, ')')).find("32 levels"),
            std::string::npos);
  std::string many = "a == 1";
  for (int i = 0; i < 40; ++i) many += " && a == 1";
  EXPECT_NE(ErrorOf(many).find("more than 64"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(2000, ' ')).find("longer than 1024"), std::string::npos);
}

TEST(BoardConstraintTest, TheCompiledFormIsKeptAndABadOneMatchesNothing) {
  const BoardConstraint* a = CompiledConstraint("rev >= 3");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, CompiledConstraint("rev >= 3"));
  EXPECT_EQ(CompiledConstraint("rev >="), nullptr);
}

}  // namespace
}  // namespace snn
