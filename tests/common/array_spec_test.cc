// Job array indices (issue 40): parsing what Slurm's --array takes, and cancelling, holding and
// releasing slices without ever listing the elements one by one.
#include "common/base/array_spec.h"

#include <gtest/gtest.h>

namespace snn {
namespace {

std::string ErrorOf(const std::string& text) {
  auto s = ParseArraySpec(text);
  return s.ok() ? "" : s.status().message();
}

TEST(ArraySpecTest, ParsesRangesStepsListsAndTheRunningLimit) {
  auto a = ParseArraySpec("0-999999%64");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->max_running(), 64u);
  EXPECT_EQ(CountOf(a->ranges()), 1'000'000u);
  auto b = ParseArraySpec("9,1-7:3,20");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(FormatArrayRanges(b->ranges()), "1-7:3,9,20");
  EXPECT_EQ(CountOf(b->ranges()), 5u);  // 1 4 7 9 20
  auto c = ParseArraySpec("0-10:4");    // 0 4 8: last moved onto the sequence
  EXPECT_EQ(FormatArrayRanges(c->ranges()), "0-8:4");
  EXPECT_EQ(ErrorOf("1-5,3-7"), "array '1-5,3-7': ranges overlap at 3; give each index once");
  EXPECT_EQ(ErrorOf("5-1"), "array '5-1': range 5-1 runs backwards");
  EXPECT_EQ(ErrorOf("0-99%0"),
            "array '0-99%0': %K takes a number of elements from 1 (at most K run at once)");
  EXPECT_EQ(ErrorOf("0-1000000"), "array '0-1000000' has 1000001 elements; at most 1000000");
  EXPECT_EQ(ErrorOf("a-b"), "array 'a-b': 'a' is not an index from 0 to 9999999");
  EXPECT_EQ(ErrorOf("1,,2"), "array '1,,2': '' is not an index from 0 to 9999999");
  EXPECT_EQ(ErrorOf(""), "array is empty; write indices such as 0-99, 1,3,5-9 or 0-98:2");
}

TEST(ArraySpecTest, SlicesComeOutAndGoBackWithoutListingElements) {
  auto a = ParseArraySpec("0-999999:3");
  ASSERT_TRUE(a.ok());
  ArrayRanges left = a->ranges();
  EXPECT_EQ(PopFirst(left), 0u);
  EXPECT_EQ(PopFirst(left), 3u);
  ArrayRanges held;
  EXPECT_EQ(RemoveSpan(left, 100, 200, &held), 33u);  // 102, 105, ..., 198
  EXPECT_EQ(FormatArrayRanges(held), "102-198:3");
  EXPECT_FALSE(Contains(left, 150));
  EXPECT_TRUE(Contains(left, 99));
  EXPECT_EQ(FormatArrayRanges(left), "6-99:3,201-999999:3");
  AddRanges(left, held);
  EXPECT_EQ(CountOf(left), 333'332u);
  EXPECT_TRUE(Contains(left, 150));
  EXPECT_EQ(RemoveSpan(left, 7, 8, nullptr), 0u);  // between elements
  EXPECT_EQ(RemoveSpan(left, 0, 9'999'999, nullptr), 333'332u);
  EXPECT_TRUE(left.empty());
}

TEST(ArraySpecTest, ParsesElementSelections) {
  auto all = ParseArraySelection("7");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->all);
  auto one = ParseArraySelection("7_5");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->job_id, 7u);
  ASSERT_EQ(one->ranges.size(), 1u);
  EXPECT_EQ(one->ranges[0].first(), 5u);
  auto some = ParseArraySelection("7_[100-200,300]");
  ASSERT_TRUE(some.ok());
  EXPECT_FALSE(some->all);
  EXPECT_EQ(some->ranges.size(), 2u);
  EXPECT_FALSE(ParseArraySelection("7_[x]").ok());
  EXPECT_FALSE(ParseArraySelection("0").ok());
}

}  // namespace
}  // namespace snn
