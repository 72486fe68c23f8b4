#include "master/http/event_json.h"

#include "common/base/proto_json.h"

namespace snn {
namespace {

// Whether protobuf prints `text` as it is between quotes: printable ASCII but for the characters
// its JSON escaping rewrites.
bool PrintsAsIs(const std::string& text) {
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>') return false;
  }
  return true;
}

class Writer {
 public:
  // False once a string could not be written as protobuf would.
  bool ok() const { return ok_; }
  std::string& out() { return out_; }

  void Key(const char* name) {
    if (!first_) out_ += ',';
    first_ = false;
    out_ += '"';
    out_ += name;
    out_ += "\":";
  }
  void String(const char* name, const std::string& value) {
    Key(name);
    if (!PrintsAsIs(value)) ok_ = false;
    out_ += '"';
    out_ += value;
    out_ += '"';
  }
  // 64-bit integers are strings in protobuf's JSON; 32-bit ones numbers.
  void Int64(const char* name, int64_t value) {
    Key(name);
    out_ += '"' + std::to_string(value) + '"';
  }
  void Uint64(const char* name, uint64_t value) {
    Key(name);
    out_ += '"' + std::to_string(value) + '"';
  }
  void Uint32(const char* name, uint32_t value) {
    Key(name);
    out_ += std::to_string(value);
  }
  // An object or list: as a field's value, or (no name) as an element of a list.
  void Open(const char* name, char bracket) {
    if (name != nullptr) {
      Key(name);
    } else if (!first_) {
      out_ += ',';
    }
    out_ += bracket;
    first_ = true;
  }
  void Close(char bracket) {
    out_ += bracket;
    first_ = false;
  }

 private:
  std::string out_;
  bool first_ = true;
  bool ok_ = true;
};

void WriteJob(Writer& w, const v1::JobEvent& job) {
  w.Open("job", '{');
  w.Uint64("id", job.id());
  w.String("tenant", job.tenant());
  w.Uint64("tenant_job_id", job.tenant_job_id());
  w.String("name", job.name());
  w.String("user", job.user());
  const std::string& state = v1::JobState_Name(job.state());
  if (state.empty()) {  // a number no name has: protobuf prints the number
    w.Key("state");
    w.out() += std::to_string(static_cast<int>(job.state()));
  } else {
    w.String("state", state);
  }
  w.String("reason", job.reason());
  w.Uint32("attempt", job.attempt());
  w.Close('}');
}

void WriteNode(Writer& w, const v1::NodeEvent& node) {
  w.Open("node", '{');
  w.String("node", node.node());
  w.String("state", node.state());
  w.Open("boards", '[');
  for (const auto& board : node.boards()) {
    w.Open(nullptr, '{');
    w.Uint32("index", board.index());
    w.String("state", board.state());
    w.Close('}');
  }
  w.Close(']');
  w.Close('}');
}

}  // namespace

std::optional<std::string> PlainEventJson(const v1::Event& event) {
  Writer w;
  w.Open(nullptr, '{');
  w.Uint64("rev", event.rev());
  w.Int64("time_ms", event.time_ms());
  switch (event.what_case()) {
    case v1::Event::kJob:
      WriteJob(w, event.job());
      break;
    case v1::Event::kNode:
      WriteNode(w, event.node());
      break;
    case v1::Event::kReset:
      w.Key("reset");
      w.out() += event.reset() ? "true" : "false";
      break;
    case v1::Event::WHAT_NOT_SET:
      break;
  }
  w.Close('}');
  if (!w.ok()) return std::nullopt;
  return std::move(w.out());
}

std::string EventJson(const v1::Event& event) {
  std::optional<std::string> plain = PlainEventJson(event);
  return plain ? std::move(*plain) : ToJsonLine(event);
}

}  // namespace snn
