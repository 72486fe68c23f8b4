#include "common/base/proto_json.h"

#include <google/protobuf/util/json_util.h>

namespace snn {

namespace {
std::string Print(const google::protobuf::Message& message, bool whitespace) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = whitespace;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}
}  // namespace

std::string ToJson(const google::protobuf::Message& message) { return Print(message, true); }
std::string ToJsonLine(const google::protobuf::Message& message) { return Print(message, false); }

Status FromJson(const std::string& json, google::protobuf::Message& message) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(json, &message, options);
  if (!status.ok()) {
    // The parser's message may go on with the text it failed on, over several lines: one line.
    std::string why(status.message());
    why = why.substr(0, why.find('\n'));
    return InvalidArgument("the body is not a " + message.GetDescriptor()->name() +
                           " in JSON: " + why);
  }
  return Status::Ok();
}

}  // namespace snn
