// An event's JSON text, as ToJsonLine (protobuf's JSON printer, with every primitive field and
// the proto field names) prints it, byte for byte, in a fraction of its time: the printer
// serializes the message and reads it back through a type resolver (14 us an event here), and the
// master formats an event for every change of every job that a watcher sees. A string with a
// byte the fast path does not print exactly as protobuf would (anything but printable ASCII that
// needs no escape) hands the whole event to the printer.
#pragma once

#include <optional>
#include <string>

#include "proto/event.pb.h"

namespace snn {

std::string EventJson(const v1::Event& event);
// The fast path alone: nullopt when a string needs protobuf's printer.
std::optional<std::string> PlainEventJson(const v1::Event& event);

}  // namespace snn
