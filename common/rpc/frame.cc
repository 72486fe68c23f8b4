#include "common/rpc/frame.h"

namespace snn {

std::string EncodeFrame(const v1::Envelope& envelope) {
  const size_t body = envelope.ByteSizeLong();
  std::string out(kFrameHeaderBytes + body, '\0');
  out[0] = static_cast<char>((body >> 24) & 0xff);
  out[1] = static_cast<char>((body >> 16) & 0xff);
  out[2] = static_cast<char>((body >> 8) & 0xff);
  out[3] = static_cast<char>(body & 0xff);
  envelope.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out.data()) +
                                           kFrameHeaderBytes);
  return out;
}

uint32_t DecodeFrameLength(const uint8_t* header) {
  return (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16) | (uint32_t{header[2]} << 8) |
         uint32_t{header[3]};
}

Result<v1::Envelope> DecodeEnvelope(const uint8_t* data, size_t size) {
  v1::Envelope envelope;
  if (!envelope.ParseFromArray(data, static_cast<int>(size))) {
    return InvalidArgument("frame is not a protobuf Envelope");
  }
  if (envelope.kind() == v1::Envelope::REQUEST && envelope.method().empty()) {
    return InvalidArgument("request without a method");
  }
  return envelope;
}

}  // namespace snn
