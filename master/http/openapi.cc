#include "master/http/openapi.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <set>

#include "master/http/rest_routes.h"
#include "proto/event.pb.h"

namespace snn {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Struct;
using google::protobuf::Value;

Value Str(const std::string& text) {
  Value v;
  v.set_string_value(text);
  return v;
}
Value Bool(bool b) {
  Value v;
  v.set_bool_value(b);
  return v;
}
Value Obj(std::initializer_list<std::pair<const char*, Value>> fields) {
  Value v;
  auto* s = v.mutable_struct_value()->mutable_fields();
  for (const auto& [k, f] : fields) (*s)[k] = f;
  return v;
}
Value List(std::initializer_list<Value> items) {
  Value v;
  for (const auto& item : items) *v.mutable_list_value()->add_values() = item;
  return v;
}
Value EmptyList() {
  Value v;
  v.mutable_list_value();
  return v;
}
Value& At(Value& v, const std::string& key) {
  return (*v.mutable_struct_value()->mutable_fields())[key];
}

Value Ref(const Descriptor* d) {
  return Obj({{"$ref", Str("#/components/schemas/" + d->full_name())}});
}

Value ScalarSchema(const FieldDescriptor* f, std::set<const Descriptor*>& wanted) {
  switch (f->type()) {
    case FieldDescriptor::TYPE_INT32:
    case FieldDescriptor::TYPE_SINT32:
    case FieldDescriptor::TYPE_SFIXED32:
      return Obj({{"type", Str("integer")}, {"format", Str("int32")}});
    case FieldDescriptor::TYPE_UINT32:
    case FieldDescriptor::TYPE_FIXED32:
      return Obj({{"type", Str("integer")}, {"format", Str("int32")}});
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_SINT64:
    case FieldDescriptor::TYPE_SFIXED64:
    case FieldDescriptor::TYPE_UINT64:
    case FieldDescriptor::TYPE_FIXED64:
      // proto3's JSON mapping writes 64-bit integers as decimal strings and reads either.
      return Obj({{"type", List({Str("string"), Str("integer")})},
                  {"pattern", Str("^-?[0-9]+$")},
                  {"description", Str("a 64-bit integer, written as a decimal string")}});
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FLOAT:
      return Obj({{"type", Str("number")}});
    case FieldDescriptor::TYPE_BOOL:
      return Obj({{"type", Str("boolean")}});
    case FieldDescriptor::TYPE_STRING:
      return Obj({{"type", Str("string")}});
    case FieldDescriptor::TYPE_BYTES:
      return Obj({{"type", Str("string")}, {"contentEncoding", Str("base64")}});
    case FieldDescriptor::TYPE_ENUM: {
      Value names;
      for (int i = 0; i < f->enum_type()->value_count(); ++i) {
        *names.mutable_list_value()->add_values() = Str(f->enum_type()->value(i)->name());
      }
      return Obj({{"type", Str("string")}, {"enum", names}});
    }
    case FieldDescriptor::TYPE_MESSAGE:
    case FieldDescriptor::TYPE_GROUP:
      wanted.insert(f->message_type());
      return Ref(f->message_type());
  }
  return Obj({});
}

Value FieldSchema(const FieldDescriptor* f, std::set<const Descriptor*>& wanted) {
  if (f->is_map()) {
    return Obj({{"type", Str("object")},
                {"additionalProperties", ScalarSchema(f->message_type()->map_value(), wanted)}});
  }
  Value item = ScalarSchema(f, wanted);
  if (f->type() == FieldDescriptor::TYPE_UINT32 || f->type() == FieldDescriptor::TYPE_FIXED32) {
    At(item, "minimum").set_number_value(0);
  }
  if (!f->is_repeated()) return item;
  return Obj({{"type", Str("array")}, {"items", item}});
}

Value MessageSchema(const Descriptor* d, std::set<const Descriptor*>& wanted) {
  Value properties = Obj({});
  for (int i = 0; i < d->field_count(); ++i) {
    At(properties, d->field(i)->name()) = FieldSchema(d->field(i), wanted);
  }
  return Obj(
      {{"type", Str("object")}, {"properties", properties}, {"additionalProperties", Bool(false)}});
}

Value ParameterOf(const std::string& name, const std::string& in, Value schema,
                  const std::string& help) {
  Value p = Obj({{"name", Str(name)}, {"in", Str(in)}, {"schema", std::move(schema)}});
  if (in == "path") At(p, "required") = Bool(true);
  if (!help.empty()) At(p, "description") = Str(help);
  return p;
}

const FieldDescriptor* FieldAt(const Descriptor* d, const std::string& path) {
  const FieldDescriptor* f = nullptr;
  size_t start = 0;
  while (d != nullptr) {
    const size_t dot = path.find('.', start);
    f = d->FindFieldByName(path.substr(start, dot - start));
    if (f == nullptr || dot == std::string::npos) return f;
    d = f->message_type();
    start = dot + 1;
  }
  return f;
}

Value Operation(const RestRoute& route, std::set<const Descriptor*>& wanted) {
  std::string id;
  bool upper = false;
  for (char c : route.verb + "_" + route.path) {
    if (c == '/' || c == '{' || c == '}' || c == '_') {
      upper = true;
      continue;
    }
    id += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    upper = false;
  }
  Value op = Obj({{"operationId", Str(id)},
                  {"summary", Str(route.summary)},
                  {"description", Str("RPC method " + route.method + "; needs the right '" +
                                      RightName(route.right) + "'")}});
  Value params;
  params.mutable_list_value();
  std::set<std::string> named;
  for (const auto& p : route.params) {
    named.insert(p.field);
    *params.mutable_list_value()->add_values() =
        ParameterOf(p.name, p.in_path ? "path" : "query",
                    FieldSchema(FieldAt(route.request, p.field), wanted), p.help);
  }
  if (route.body == RestBody::kNone) {
    for (int i = 0; i < route.request->field_count(); ++i) {
      const auto* f = route.request->field(i);
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE || named.count(f->name())) continue;
      bool fixed = false;
      for (const auto& [field, value] : route.fixed) fixed = fixed || field == f->name();
      if (fixed) continue;
      Value schema = FieldSchema(f, wanted);
      std::string help;
      if (f->is_repeated()) {
        schema = Obj({{"type", Str("string")}});
        help = "a comma-separated list";
      }
      *params.mutable_list_value()->add_values() = ParameterOf(f->name(), "query", schema, help);
    }
  }
  if (route.method == rpc::kJobShow.name) {
    *params.mutable_list_value()->add_values() = ParameterOf(
        "wait", "query", Obj({{"type", Str("string")}}),
        "a long poll, up to 5m (\"30s\"): answer when the job differs from what If-None-Match "
        "names, or at its next event without one; 304 when the wait ends with no change");
  }
  if (!params.list_value().values().empty()) At(op, "parameters") = params;
  if (route.body == RestBody::kMessage) {
    wanted.insert(route.request);
    At(op, "requestBody") =
        Obj({{"required", Bool(false)},
             {"content", Obj({{"application/json", Obj({{"schema", Ref(route.request)}})}})}});
  } else if (route.body == RestBody::kJobDocument) {
    At(op, "requestBody") =
        Obj({{"required", Bool(true)},
             {"description", Str("a job file, as docs/reference/job-file.md describes; or a form "
                                 "upload of the job file (part 'job') with its model (part "
                                 "'model': a NIR file or a JSON model), which the master reads")},
             {"content",
              Obj({{"application/yaml", Obj({{"schema", Obj({{"type", Str("string")}})}})},
                   {"application/json", Obj({{"schema", Obj({{"type", Str("object")}})}})},
                   {"multipart/form-data",
                    Obj({{"schema",
                          Obj({{"type", Str("object")},
                               {"required", List({Str("job"), Str("model")})},
                               {"properties",
                                Obj({{"job", Obj({{"type", Str("string")}})},
                                     {"model", Obj({{"type", Str("string")},
                                                    {"format", Str("binary")}})}})}})}})}})}});
  }
  wanted.insert(route.response);
  Value ok =
      Obj({{"description", Str("the answer, as snnctl -o json prints it")},
           {"content", Obj({{"application/json", Obj({{"schema", Ref(route.response)}})}})}});
  Value error =
      Obj({{"description", Str("a refusal or an error: one line saying why")},
           {"content",
            Obj({{"application/json",
                  Obj({{"schema", Obj({{"$ref", Str("#/components/schemas/Error")}})}})}})}});
  Value responses = Obj({{"200", ok}, {"default", error}});
  if (route.verb == "GET") At(responses, "304") = Obj({{"description", Str("not modified")}});
  At(op, "responses") = responses;
  return op;
}

// A refusal's answer: {"error", "code"}, one line saying why.
Value Refusal() {
  return Obj({{"description", Str("a refusal: one line saying why")},
              {"content",
               Obj({{"application/json",
                     Obj({{"schema", Obj({{"$ref", Str("#/components/schemas/Error")}})}})}})}});
}

std::string Build() {
  std::set<const Descriptor*> wanted;
  Value paths = Obj({});
  for (const auto& route : RestRoutes()) {
    std::string verb;
    for (char c : route.verb)
      verb += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    At(At(paths, route.path), verb) = Operation(route, wanted);
  }
  At(At(paths, "/v1/events"), "get") =
      Obj({{"operationId", Str("getV1Events")},
           {"summary", Str("Server-Sent Events: job transitions, node and board states, as the "
                           "caller may see them; resumable")},
           {"parameters",
            List({ParameterOf("since", "query", Obj({{"type", Str("string")}}),
                              "the last revision seen (as Last-Event-ID); 0 or none: from now"),
                  ParameterOf("types", "query", Obj({{"type", Str("string")}}),
                              "job, node or both (default), comma-separated"),
                  ParameterOf("Last-Event-ID", "header", Obj({{"type", Str("string")}}),
                              "what an EventSource sends when it reconnects")})},
           {"responses",
            Obj({{"200",
                  Obj({{"description",
                        Str("text/event-stream: events named job, node or reset, each with "
                            "its revision as id and a snn.v1.Event in JSON as data")},
                       {"content", Obj({{"text/event-stream",
                                         Obj({{"schema", Obj({{"type", Str("string")}})}})}})}})},
                 {"default", Refusal()}})}});
  wanted.insert(v1::Event::descriptor());
  // A model alone, read as a job's would be (master/http/model_upload.h).
  At(At(paths, "/v1/models"), "post") = Obj(
      {{"operationId", Str("postV1Models")},
       {"summary", Str("the network a model file makes (a NIR export or a JSON model), as the "
                       "master reads it for a job; for experiment services' experiments")},
       {"requestBody",
        Obj({{"required", Bool(true)},
             {"content",
              Obj({{"multipart/form-data",
                    Obj({{"schema",
                          Obj({{"type", Str("object")},
                               {"required", List({Str("model")})},
                               {"properties",
                                Obj({{"model",
                                      Obj({{"type", Str("string")}, {"format", Str("binary")}})},
                                     {"model_step_ms", Obj({{"type", Str("string")}})},
                                     {"model_reset", Obj({{"type", Str("string")}})}})}})}})}})}})},
       {"responses",
        Obj({{"200",
              Obj({{"description", Str("{\"model\": the model (snn.v1.Model in JSON), "
                                       "\"notes\": what was assumed}")},
                   {"content", Obj({{"application/json",
                                     Obj({{"schema", Obj({{"type", Str("object")}})}})}})}})},
             {"default", Refusal()}})}});
  Value schemas = Obj({});
  At(schemas, "Error") = Obj({{"type", Str("object")},
                              {"required", List({Str("error"), Str("code")})},
                              {"properties", Obj({{"error", Obj({{"type", Str("string")}})},
                                                  {"code", Obj({{"type", Str("string")}})}})}});
  std::set<const Descriptor*> done;
  while (!wanted.empty()) {
    const Descriptor* d = *wanted.begin();
    wanted.erase(wanted.begin());
    if (!done.insert(d).second) continue;
    At(schemas, d->full_name()) = MessageSchema(d, wanted);
  }
  Value doc = Obj(
      {{"openapi", Str("3.1.0")},
       {"info", Obj({{"title", Str("snn HTTP API")},
                     {"version", Str("1")},
                     {"description",
                      Str("Every snnctl operation over HTTP: docs/reference/http-api.md")}})},
       {"security", List({Obj({{"token", EmptyList()}})})},
       {"paths", paths},
       {"components",
        Obj({{"schemas", schemas},
             {"securitySchemes",
              Obj({{"token",
                    Obj({{"type", Str("http")},
                         {"scheme", Str("bearer")},
                         {"description", Str("an access token: snnctl token create")}})}})}})}});
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  (void)google::protobuf::util::MessageToJsonString(doc, &out, options);
  return out;
}

}  // namespace

const std::string& OpenApiDocument() {
  static const std::string document = Build();
  return document;
}

}  // namespace snn
