// The spike gateway's wire format: what a task and its node agent exchange over the Unix socket
// named by SNN_GATEWAY. Both sides are on one host, so integers travel in host byte order.
//
// Every request is a RequestHeader followed by `count` items of payload; every answer is a
// ReplyHeader followed by `count` bytes (text for an error) or spikes (for kRead).
//   kHello   payload: the token (count bytes). Must come first. Answer: kOk, value = the task's
//            logical core count << 32 | neurons per core; count = 0.
//   kInject  payload: count Spikes. Admitted whole or not at all. Answer: kOk (value = the
//            network's current step), or kThrottled (value = microseconds to wait) when the
//            task asked not to wait (kNoWait) and is over its budget, or kError.
//   kStep    count = time steps to advance. Answer: kOk, value = the step reached.
//   kRead    count = at most this many output spikes. Answer: kOk with count Spikes.
//   kUsage   Answer: kOk with one UsageCounters as payload (count = its size).
// A malformed request (unknown op, a count above the limits, a bad token) is answered kError
// and the connection is closed; spikes outside the task's cores are answered kError and the
// connection stays open. Nothing of a refused batch reaches the board.
#pragma once

#include <cstdint>

namespace snn::wire {

struct Spike {
  uint16_t core = 0;    // the task's logical core
  uint16_t neuron = 0;  // neuron index on that core
  uint32_t step = 0;    // time step: when an injected spike fires, or when an output spike left
};
static_assert(sizeof(Spike) == 8);

enum Op : uint16_t { kHello = 1, kInject = 2, kStep = 3, kRead = 4, kUsage = 5 };
enum Flags : uint16_t { kNoWait = 1 };  // kInject: answer kThrottled instead of waiting
enum ReplyStatus : uint16_t { kOk = 0, kThrottled = 1, kError = 2 };

struct RequestHeader {
  uint16_t op = 0;
  uint16_t flags = 0;
  uint32_t count = 0;
};
static_assert(sizeof(RequestHeader) == 8);

struct ReplyHeader {
  uint16_t status = 0;
  uint16_t op = 0;
  uint32_t count = 0;
  uint64_t value = 0;
};
static_assert(sizeof(ReplyHeader) == 16);

// What the gateway has counted for one task (spikes unless named otherwise).
struct UsageCounters {
  uint64_t injected = 0;   // admitted into the board
  uint64_t delivered = 0;  // processed by the board (injected and network spikes)
  uint64_t delayed = 0;    // processed one or more steps late because the board was saturated
  uint64_t dropped = 0;    // lost to saturation (backlog full)
  uint64_t throttled = 0;  // held back by the task's KSPS budget (waited or answered throttled)
  uint64_t refused = 0;    // addressed outside the task's cores or neurons
  uint64_t outputs = 0;    // output spikes produced
};

constexpr uint32_t kMaxTokenBytes = 256;
constexpr uint32_t kMaxSpikesPerBatch = 1u << 16;
constexpr uint32_t kMaxStepsPerCall = 100000;

}  // namespace snn::wire
