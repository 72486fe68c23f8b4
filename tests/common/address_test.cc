#include "common/rpc/address.h"

#include <gtest/gtest.h>

namespace snn {
namespace {

TEST(ParseHostPortTest, AcceptsHostAndPort) {
  auto hp = ParseHostPort("127.0.0.1:6817");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "127.0.0.1");
  EXPECT_EQ(hp->port, 6817);
  auto v6 = ParseHostPort("[::1]:80");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
}

TEST(ParseHostPortTest, RejectsBadInput) {
  for (const char* bad : {"", "host", ":80", "host:", "host:abc", "host:70000", "host:0"}) {
    EXPECT_FALSE(ParseHostPort(bad).ok()) << bad;
  }
  EXPECT_TRUE(ParseHostPort("127.0.0.1:0", /*allow_zero_port=*/true).ok());
}

}  // namespace
}  // namespace snn
