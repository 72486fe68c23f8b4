#include "master/policy/policy_diff.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/message_differencer.h>

#include <map>
#include <vector>

namespace snn {
namespace {

using google::protobuf::util::MessageDifferencer;

template <typename Named>
std::string NamedChanges(const google::protobuf::RepeatedPtrField<Named>& before,
                         const google::protobuf::RepeatedPtrField<Named>& after) {
  std::map<std::string, const Named*> old_by_name, new_by_name;
  for (const auto& x : before) old_by_name[x.name()] = &x;
  for (const auto& x : after) new_by_name[x.name()] = &x;
  std::vector<std::string> added, removed, changed;
  for (const auto& [name, x] : new_by_name) {
    auto it = old_by_name.find(name);
    if (it == old_by_name.end()) {
      added.push_back(name);
    } else if (!MessageDifferencer::Equals(*it->second, *x)) {
      changed.push_back(name);
    }
  }
  for (const auto& [name, x] : old_by_name) {
    if (!new_by_name.count(name)) removed.push_back(name);
  }
  std::string out;
  auto list = [&](const char* what, const std::vector<std::string>& names) {
    if (names.empty()) return;
    out += (out.empty() ? "" : ", ") + std::string(what);
    for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : " ") + names[i];
  };
  list("added", added);
  list("removed", removed);
  list("changed", changed);
  return out;
}

}  // namespace

std::string DescribePolicyChange(const v1::SchedulingConfig& before,
                                 const v1::SchedulingConfig& after) {
  std::vector<std::string> parts;
  if (std::string q = NamedChanges(before.queues(), after.queues()); !q.empty()) {
    parts.push_back("queues: " + q);
  }
  if (std::string t = NamedChanges(before.tenants(), after.tenants()); !t.empty()) {
    parts.push_back("tenants: " + t);
  }
  // Every other top-level field, by name.
  const auto* descriptor = v1::SchedulingConfig::descriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const auto* field = descriptor->field(i);
    if (field->name() == "queues" || field->name() == "tenants") continue;
    MessageDifferencer diff;
    std::vector<const google::protobuf::FieldDescriptor*> others;
    for (int j = 0; j < descriptor->field_count(); ++j) {
      if (j != i) others.push_back(descriptor->field(j));
    }
    for (const auto* f : others) diff.IgnoreField(f);
    if (!diff.Compare(before, after)) parts.push_back(field->name());
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

}  // namespace snn
