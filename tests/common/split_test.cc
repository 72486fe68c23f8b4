#include "common/base/split.h"

#include <gtest/gtest.h>

namespace snn {
namespace {

using List = std::vector<std::string>;

TEST(SplitListTest, DropsEmptyItemsUnlessAsked) {
  EXPECT_EQ(SplitList("a,b,,c"), (List{"a", "b", "c"}));
  EXPECT_EQ(SplitList(""), List{});
  EXPECT_EQ(SplitList(",a,"), List{"a"});
  EXPECT_EQ(SplitList("a,,b", ',', true), (List{"a", "", "b"}));
  EXPECT_EQ(SplitList("", ',', true), List{""});
  EXPECT_EQ(SplitList("a,", ',', true), (List{"a", ""}));
  EXPECT_EQ(SplitList("x:y", ':'), (List{"x", "y"}));
}

}  // namespace
}  // namespace snn
