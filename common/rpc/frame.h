// Frames: a 4-byte big-endian length, then a serialized Envelope. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/base/status.h"
#include "proto/rpc.pb.h"

namespace snn {

inline constexpr size_t kFrameHeaderBytes = 4;
inline constexpr size_t kDefaultMaxFrameBytes = 4 << 20;

// The header plus the serialized envelope, ready to write.
std::string EncodeFrame(const v1::Envelope& envelope);

// Reads the body length from a 4-byte header.
uint32_t DecodeFrameLength(const uint8_t* header);

// Parses a frame body; garbage gives an error, never a crash.
Result<v1::Envelope> DecodeEnvelope(const uint8_t* data, size_t size);

}  // namespace snn
