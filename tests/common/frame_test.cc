#include "common/rpc/frame.h"

#include <gtest/gtest.h>

namespace snn {
namespace {

TEST(FrameTest, RoundTripsAnEnvelope) {
  v1::Envelope e;
  e.set_id(42);
  e.set_method("job.example");
  e.set_payload(std::string(1000, 'x'));
  const std::string frame = EncodeFrame(e);
  ASSERT_GE(frame.size(), kFrameHeaderBytes);
  const auto* bytes = reinterpret_cast<const uint8_t*>(frame.data());
  EXPECT_EQ(DecodeFrameLength(bytes), frame.size() - kFrameHeaderBytes);
  auto back = DecodeEnvelope(bytes + kFrameHeaderBytes, frame.size() - kFrameHeaderBytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->id(), 42u);
  EXPECT_EQ(back->method(), "job.example");
  EXPECT_EQ(back->payload().size(), 1000u);
}

TEST(FrameTest, LengthIsBigEndian) {
  const uint8_t header[4] = {0x01, 0x02, 0x03, 0x04};
  EXPECT_EQ(DecodeFrameLength(header), 0x01020304u);
}

TEST(FrameTest, GarbageIsAnErrorNotACrash) {
  const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00};
  EXPECT_FALSE(DecodeEnvelope(garbage, sizeof garbage).ok());
  v1::Envelope no_method;  // a request must name its method
  const std::string body = no_method.SerializeAsString();
  EXPECT_FALSE(DecodeEnvelope(reinterpret_cast<const uint8_t*>(body.data()), body.size()).ok());
}

}  // namespace
}  // namespace snn
