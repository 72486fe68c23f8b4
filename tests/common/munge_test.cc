// What users read when MUNGE says no: one line that says what to check.
#include "common/identity/munge.h"

#include <gtest/gtest.h>
#include <munge.h>

namespace snn {
namespace {

TEST(MungeErrorTest, ClockSkewAndAnAbsentMungedSayWhatToCheck) {
  const Status expired = MungeError(EMUNGE_CRED_EXPIRED, "");
  EXPECT_EQ(expired.code(), Code::kUnauthenticated);
  EXPECT_NE(expired.message().find("check NTP"), std::string::npos);
  const Status future = MungeError(EMUNGE_CRED_REWOUND, "");
  EXPECT_NE(future.message().find("clock is ahead"), std::string::npos);
  const Status absent = MungeError(EMUNGE_SOCKET, "/run/munge/x");
  EXPECT_EQ(absent.code(), Code::kUnavailable);
  EXPECT_NE(absent.message().find("cannot reach munged at /run/munge/x"), std::string::npos);
  EXPECT_NE(MungeError(EMUNGE_CRED_REPLAYED, "").message().find("replayed"), std::string::npos);
  EXPECT_NE(MungeError(EMUNGE_CRED_INVALID, "").message().find("forged"), std::string::npos);
  for (int e : {EMUNGE_CRED_EXPIRED, EMUNGE_CRED_REWOUND, EMUNGE_SOCKET, EMUNGE_CRED_REPLAYED,
                EMUNGE_BAD_CRED, EMUNGE_SNAFU}) {
    EXPECT_EQ(MungeError(e, "").message().find('\n'), std::string::npos) << e;
  }
}

TEST(MungeErrorTest, AnAbsentMungedIsOneLineWhenEncoding) {
  auto cred = MungeEncode("/nonexistent/munge.socket");
  ASSERT_FALSE(cred.ok());
  EXPECT_NE(cred.status().message().find("cannot reach munged"), std::string::npos)
      << cred.status().message();
}

}  // namespace
}  // namespace snn
