// Frames as a peer sends them: a 4-byte length, then an Envelope. Whatever the bytes, decoding
// gives an envelope or an error, and a decoded envelope encodes to a frame that decodes again.
#include <cstddef>
#include <cstdint>

#include "common/rpc/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < snn::kFrameHeaderBytes) return 0;
  const uint32_t length = snn::DecodeFrameLength(data);
  const size_t body = size - snn::kFrameHeaderBytes;
  if (length > snn::kDefaultMaxFrameBytes) return 0;  // the connection closes; nothing is read
  auto envelope = snn::DecodeEnvelope(data + snn::kFrameHeaderBytes, length < body ? length : body);
  if (!envelope.ok()) return 0;
  const std::string frame = snn::EncodeFrame(*envelope);
  const auto* bytes = reinterpret_cast<const uint8_t*>(frame.data());
  if (snn::DecodeFrameLength(bytes) != frame.size() - snn::kFrameHeaderBytes) __builtin_trap();
  if (!snn::DecodeEnvelope(bytes + snn::kFrameHeaderBytes, frame.size() - 4).ok()) __builtin_trap();
  return 0;
}
