#include "master/http/event_json.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "common/base/proto_json.h"

namespace snn {
namespace {

// Random text: printable ASCII but for what protobuf escapes, with those, control bytes and UTF-8
// mixed in when `any_byte` (not invalid UTF-8: a string field's text is checked where it comes in).
std::string RandomText(std::mt19937& rng, bool any_byte) {
  std::string out;
  const int length = std::uniform_int_distribution<int>(0, 12)(rng);
  for (int i = 0; i < length; ++i) {
    if (any_byte && std::uniform_int_distribution<int>(0, 3)(rng) == 0) {
      static const char* const kOdd[] = {"\"",   "\\",   "<",    ">",        "\n",
                                         "\t",   "\x01", "\x7f", "\xc3\xa9", "\xe2\x80\xa8",
                                         "\xff", "\xc3", "&",    "'"};
      out += kOdd[std::uniform_int_distribution<size_t>(0, std::size(kOdd) - 1)(rng)];
    } else {
      char c;
      do {
        c = static_cast<char>(std::uniform_int_distribution<int>(0x20, 0x7e)(rng));
      } while (c == '"' || c == '\\' || c == '<' || c == '>');
      out += c;
    }
  }
  return out;
}

v1::Event RandomEvent(std::mt19937& rng, bool any_byte) {
  v1::Event event;
  event.set_rev(std::uniform_int_distribution<uint64_t>()(rng) >> (rng() % 64));
  event.set_time_ms(std::uniform_int_distribution<int64_t>()(rng) >> (rng() % 64));
  switch (rng() % 4) {
    case 0: {
      v1::JobEvent* job = event.mutable_job();
      if (rng() % 4 == 0) break;  // every field at its default
      job->set_id(rng());
      job->set_tenant(RandomText(rng, any_byte));
      job->set_tenant_job_id(std::uniform_int_distribution<uint64_t>()(rng));
      job->set_name(RandomText(rng, any_byte));
      job->set_user(RandomText(rng, any_byte));
      job->set_state(static_cast<v1::JobState>(rng() % 12));  // some have no name
      job->set_reason(RandomText(rng, any_byte));
      job->set_attempt(rng());
      break;
    }
    case 1: {
      v1::NodeEvent* node = event.mutable_node();
      node->set_node(RandomText(rng, any_byte));
      node->set_state(RandomText(rng, any_byte));
      const int boards = rng() % 4;
      for (int b = 0; b < boards; ++b) {
        v1::BoardEvent* board = node->add_boards();
        board->set_index(rng() % 3 == 0 ? 0 : rng());
        board->set_state(RandomText(rng, any_byte));
      }
      break;
    }
    case 2:
      event.set_reset(rng() % 2 == 0);
      break;
    default:
      break;  // nothing in the oneof
  }
  return event;
}

TEST(EventJsonTest, PrintsEveryEventAsProtobufsPrinterDoes) {
  std::mt19937 rng(20261128);
  int plain = 0;
  for (int i = 0; i < 20000; ++i) {
    const bool any_byte = i % 2 == 1;
    const v1::Event event = RandomEvent(rng, any_byte);
    const std::string expected = ToJsonLine(event);
    ASSERT_EQ(EventJson(event), expected) << event.ShortDebugString();
    if (std::optional<std::string> fast = PlainEventJson(event)) {
      ++plain;
      ASSERT_EQ(*fast, expected) << event.ShortDebugString();
    } else {
      ASSERT_TRUE(any_byte) << "printable ASCII took the slow path: " << event.ShortDebugString();
    }
  }
  EXPECT_GT(plain, 10000);  // every plain event and some of the others
}

}  // namespace
}  // namespace snn
