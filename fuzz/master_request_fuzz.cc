// Every request message the master parses, with the checks it runs before acting on one. The
// first byte picks the message type (every snn.v1 message whose name ends in "Request"), the rest
// is its payload. A payload either fails to parse (the master answers "malformed") or goes
// through the same validation the master's handlers apply: job admission (with the network),
// node registration, and policy changes. None may crash, hang or allocate without bound.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/model/model.h"
#include "master/jobs/admission.h"
#include "master/sched/policy_config.h"
#include "master/services/agent_service.h"
#include "proto/billing.pb.h"
#include "proto/ha.pb.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"
#include "proto/policy.pb.h"
#include "proto/rpc.pb.h"

namespace {

std::vector<const google::protobuf::Descriptor*> RequestTypes() {
  // Linking the generated files registers them; name one of each so that they are linked.
  const google::protobuf::FileDescriptor* files[] = {
      snn::v1::SubmitRequest::descriptor()->file(), snn::v1::RegisterRequest::descriptor()->file(),
      snn::v1::PolicyGetRequest::descriptor()->file(), snn::v1::Envelope::descriptor()->file(),
      // Appended, so that the corpus keeps its meaning: accounting and the HA snapshot.
      snn::v1::UsageRequest::descriptor()->file(),
      snn::v1::HaSnapshotRequest::descriptor()->file()};
  std::vector<const google::protobuf::Descriptor*> types;
  for (const auto* file : files) {
    for (int i = 0; i < file->message_type_count(); ++i) {
      const auto* type = file->message_type(i);
      const std::string& name = type->name();
      if (name.size() > 7 && name.compare(name.size() - 7, 7, "Request") == 0) {
        types.push_back(type);
      }
    }
  }
  return types;
}

snn::BoardCapacity OneBoard() {
  snn::BoardCapacity b;
  b.node = "n1";
  b.type = "sim-v1";
  b.pools = {"default"};
  b.ksps_total = b.ksps_free = 1000;
  b.streams_total = b.streams_free = 8;
  b.largest_live = snn::Rect{0, 0, 16, 16};
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto types = RequestTypes();
  static google::protobuf::DynamicMessageFactory factory;
  static const snn::v1::SchedulingConfig policy = snn::DefaultSchedulingConfig();
  static const std::vector<snn::BoardClass> boards = snn::ClassifyBoards({OneBoard()});
  if (size == 0 || types.empty()) return 0;
  const auto* type = types[data[0] % types.size()];
  const std::string payload(reinterpret_cast<const char*>(data + 1), size - 1);
  std::unique_ptr<google::protobuf::Message> message(factory.GetPrototype(type)->New());
  if (!message->ParseFromString(payload)) return 0;
  if (type == snn::v1::SubmitRequest::descriptor()) {
    snn::v1::SubmitRequest req;
    if (!req.ParseFromString(payload)) __builtin_trap();  // the same bytes, the generated type
    (void)snn::AdmitJob(req.spec(), "fuzz", snn::AdmissionLimits(), policy, boards);
  } else if (type == snn::v1::RegisterRequest::descriptor()) {
    snn::v1::RegisterRequest req;
    if (!req.ParseFromString(payload)) __builtin_trap();
    (void)snn::AgentService::ValidateNode(req.node());
  } else if (type == snn::v1::SetTenantRequest::descriptor() ||
             type == snn::v1::SetQueueRequest::descriptor()) {
    snn::v1::SchedulingConfig changed = policy;
    if (type == snn::v1::SetTenantRequest::descriptor()) {
      snn::v1::SetTenantRequest req;
      if (!req.ParseFromString(payload)) __builtin_trap();
      *changed.add_tenants() = req.tenant();
    } else {
      snn::v1::SetQueueRequest req;
      if (!req.ParseFromString(payload)) __builtin_trap();
      *changed.add_queues() = req.queue();
    }
    (void)snn::ValidatePolicy(changed);
  }
  return 0;
}
