#include "master/http/rest_request.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "common/base/proto_json.h"
#include "common/base/split.h"
#include "common/daemon/job_file.h"
#include "proto/job.pb.h"

namespace snn {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> Decode(std::string_view text, bool plus_is_space) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%') {
      if (i + 2 >= text.size() || HexDigit(text[i + 1]) < 0 || HexDigit(text[i + 2]) < 0) {
        return InvalidArgument("a '%' in the request's address is not followed by two hex digits");
      }
      out += static_cast<char>(HexDigit(text[i + 1]) * 16 + HexDigit(text[i + 2]));
      i += 2;
    } else if (plus_is_space && text[i] == '+') {
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

template <typename T>
Result<T> ParseInteger(const std::string& text, const std::string& what) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return InvalidArgument(what + " must be a whole number from " +
                           std::to_string(std::numeric_limits<T>::min()) + " to " +
                           std::to_string(std::numeric_limits<T>::max()) + ", not '" +
                           text.substr(0, 64) + "'");
  }
  return value;
}

Status SetScalar(Message& m, const FieldDescriptor* f, const std::string& text,
                 const std::string& what) {
  const auto* r = m.GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      auto v = ParseInteger<int32_t>(text, what);
      if (!v.ok()) return v.status();
      rep ? r->AddInt32(&m, f, *v) : r->SetInt32(&m, f, *v);
      return Status::Ok();
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      auto v = ParseInteger<int64_t>(text, what);
      if (!v.ok()) return v.status();
      rep ? r->AddInt64(&m, f, *v) : r->SetInt64(&m, f, *v);
      return Status::Ok();
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      auto v = ParseInteger<uint32_t>(text, what);
      if (!v.ok()) return v.status();
      rep ? r->AddUInt32(&m, f, *v) : r->SetUInt32(&m, f, *v);
      return Status::Ok();
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      auto v = ParseInteger<uint64_t>(text, what);
      if (!v.ok()) return v.status();
      rep ? r->AddUInt64(&m, f, *v) : r->SetUInt64(&m, f, *v);
      return Status::Ok();
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !std::isfinite(v)) {
        return InvalidArgument(what + " must be a number, not '" + text.substr(0, 64) + "'");
      }
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        rep ? r->AddDouble(&m, f, v) : r->SetDouble(&m, f, v);
      } else {
        rep ? r->AddFloat(&m, f, static_cast<float>(v)) : r->SetFloat(&m, f, static_cast<float>(v));
      }
      return Status::Ok();
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      if (text != "true" && text != "false" && text != "1" && text != "0") {
        return InvalidArgument(what + " must be true or false, not '" + text.substr(0, 64) + "'");
      }
      const bool v = text == "true" || text == "1";
      rep ? r->AddBool(&m, f, v) : r->SetBool(&m, f, v);
      return Status::Ok();
    }
    case FieldDescriptor::CPPTYPE_STRING:
      rep ? r->AddString(&m, f, text) : r->SetString(&m, f, text);
      return Status::Ok();
    case FieldDescriptor::CPPTYPE_ENUM: {
      std::string upper = text;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      const auto* value = f->enum_type()->FindValueByName(upper);
      if (value == nullptr) {
        std::string names;
        for (int i = 0; i < f->enum_type()->value_count(); ++i) {
          names += (i ? ", " : "") + f->enum_type()->value(i)->name();
        }
        return InvalidArgument(what + " must be one of " + names + ", not '" + text.substr(0, 64) +
                               "'");
      }
      rep ? r->AddEnum(&m, f, value) : r->SetEnum(&m, f, value);
      return Status::Ok();
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return InvalidArgument(what + " cannot be given as text; send the request's body in JSON");
}

// The query parameters a route takes: its named ones and its request's top-level scalar fields.
std::vector<std::string> QueryNames(const RestRoute& route) {
  std::vector<std::string> names;
  for (const auto& p : route.params) {
    if (!p.in_path) names.push_back(p.name);
  }
  if (route.body != RestBody::kNone) return names;
  for (int i = 0; i < route.request->field_count(); ++i) {
    const auto* f = route.request->field(i);
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) names.push_back(f->name());
  }
  return names;
}

std::vector<std::string> Segments(const std::string& path) { return SplitList(path, '/'); }

}  // namespace

Result<HttpTarget> ParseTarget(const std::string& target) {
  HttpTarget out;
  const size_t q = target.find('?');
  auto path = Decode(std::string_view(target).substr(0, q), false);
  if (!path.ok()) return path.status();
  out.path = std::move(path).value();
  if (q == std::string::npos) return out;
  for (const auto& pair : SplitList(target.substr(q + 1), '&')) {
    const size_t eq = pair.find('=');
    auto key = Decode(std::string_view(pair).substr(0, eq), true);
    if (!key.ok()) return key.status();
    auto value =
        eq == std::string::npos ? Result<std::string>("") : Decode(pair.substr(eq + 1), true);
    if (!value.ok()) return value.status();
    out.query.emplace(std::move(key).value(), std::move(value).value());
  }
  return out;
}

Result<RouteMatch> MatchRoute(const std::string& verb, const std::string& path) {
  const auto segments = Segments(path);
  std::string allowed;
  for (const auto& route : RestRoutes()) {
    const auto pattern = Segments(route.path);
    if (pattern.size() != segments.size()) continue;
    RouteMatch match{&route, {}};
    bool same = true;
    for (size_t i = 0; i < pattern.size() && same; ++i) {
      if (pattern[i].size() > 2 && pattern[i].front() == '{' && pattern[i].back() == '}') {
        match.path_params[pattern[i].substr(1, pattern[i].size() - 2)] = segments[i];
      } else {
        same = pattern[i] == segments[i];
      }
    }
    if (!same) continue;
    if (route.verb == verb) return match;
    allowed += (allowed.empty() ? "" : ", ") + route.verb;
  }
  if (!allowed.empty()) {
    return FailedPrecondition(verb.substr(0, 16) + " is not allowed on " + path.substr(0, 128) +
                              " (it takes " + allowed + ")");
  }
  return NotFound("no resource " + path.substr(0, 128) + " (the API's routes: /v1/openapi.json)");
}

Status SetFieldFromText(Message& message, const std::string& field_path, const std::string& text,
                        const std::string& what) {
  Message* m = &message;
  const auto parts = SplitList(field_path, '.');
  for (size_t i = 0; i < parts.size(); ++i) {
    const FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(parts[i]);
    if (f == nullptr) return Internal("route names unknown field " + field_path);
    if (i + 1 < parts.size()) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || f->is_repeated()) {
        return Internal("route names a field inside a non-message: " + field_path);
      }
      m = m->GetReflection()->MutableMessage(m, f);
      continue;
    }
    if (f->is_repeated()) {
      m->GetReflection()->ClearField(m, f);
      for (const auto& item : SplitList(text, ',')) {
        SNN_RETURN_IF_ERROR(SetScalar(*m, f, item, what));
      }
      return Status::Ok();
    }
    return SetScalar(*m, f, text, what);
  }
  return Internal("empty field path");
}

Result<std::unique_ptr<Message>> BuildRequest(const RouteMatch& match, const HttpTarget& target,
                                              const std::string& body,
                                              const std::vector<std::string>& reserved) {
  const RestRoute& route = *match.route;
  std::unique_ptr<Message> request(
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(route.request)->New());
  switch (route.body) {
    case RestBody::kNone:
      if (!body.empty()) {
        return InvalidArgument(route.verb + " " + route.path +
                               " takes no body; its parameters go in the address");
      }
      break;
    case RestBody::kMessage:
      if (!body.empty()) SNN_RETURN_IF_ERROR(FromJson(body, *request));
      break;
    case RestBody::kJobDocument: {
      if (body.empty()) return InvalidArgument("the body must be a job file (YAML or JSON)");
      auto spec = ParseJobYaml(body, "job");
      if (!spec.ok()) return spec.status();
      if (!spec->task().resources().model().empty()) {
        return InvalidArgument(
            "task.resources.model names a file on your machine, which the master cannot read: "
            "give task.resources.cores instead, or submit with snnctl, which reads the model");
      }
      *static_cast<v1::SubmitRequest&>(*request).mutable_spec() = std::move(spec).value();
      break;
    }
  }
  for (const auto& p : route.params) {
    if (!p.in_path) continue;
    auto it = match.path_params.find(p.name);
    if (it == match.path_params.end()) return Internal("route lacks {" + p.name + "}");
    SNN_RETURN_IF_ERROR(SetFieldFromText(*request, p.field, it->second, "the " + p.name));
  }
  const auto names = QueryNames(route);
  for (const auto& [key, value] : target.query) {
    if (std::find(reserved.begin(), reserved.end(), key) != reserved.end()) continue;
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      return InvalidArgument("unknown parameter '" + key.substr(0, 64) + "' (" + route.verb + " " +
                             route.path + " takes " + (known.empty() ? "none" : known) + ")");
    }
    std::string field = key;
    for (const auto& p : route.params) {
      if (p.name == key) field = p.field;
    }
    SNN_RETURN_IF_ERROR(SetFieldFromText(*request, field, value, "parameter " + key));
  }
  for (const auto& [field, value] : route.fixed) {
    SNN_RETURN_IF_ERROR(SetFieldFromText(*request, field, value, field));
  }
  return request;
}

}  // namespace snn
