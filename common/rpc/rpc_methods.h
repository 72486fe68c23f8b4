// Every RPC method of the wire protocol, declared once: its name, its request and response
// types, and the right a caller needs. The master's and the agent's routers register handlers
// by these declarations, every client call names one, and the rights test reads the lists at the
// bottom, so a method's name, types and right cannot disagree between the two ends.
// Plain constants: safe to use from any thread.
#pragma once

#include <array>
#include <string_view>

#include "common/identity/identity.h"
#include "proto/access.pb.h"
#include "proto/billing.pb.h"
#include "proto/experiment.pb.h"
#include "proto/ha.pb.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"
#include "proto/policy.pb.h"
#include "proto/reservation.pb.h"

namespace snn {

template <typename Req, typename Resp>
struct RpcMethod {
  using Request = Req;
  using Response = Resp;
  std::string_view name;
  Right right;  // what the serving side requires of the caller
};

// A method's name and right, whatever its types (for lists and audits).
struct RpcMethodInfo {
  std::string_view name;
  Right right;
  template <typename Req, typename Resp>
  constexpr RpcMethodInfo(const RpcMethod<Req, Resp>& m) : name(m.name), right(m.right) {}
};

namespace rpc {

// --- Served by the master: users' jobs and the pool ---
inline constexpr RpcMethod<v1::SubmitRequest, v1::SubmitResponse> kJobSubmit{"job.submit",
                                                                             Right::kUser};
inline constexpr RpcMethod<v1::CancelRequest, v1::CancelResponse> kJobCancel{"job.cancel",
                                                                             Right::kUser};
inline constexpr RpcMethod<v1::KeepaliveRequest, v1::KeepaliveResponse> kJobKeepalive{
    "job.keepalive", Right::kUser};
inline constexpr RpcMethod<v1::ExperimentSubmitRequest, v1::ExperimentSubmitResponse>
    kExperimentSubmit{"experiment.submit", Right::kUser};
inline constexpr RpcMethod<v1::ExperimentListRequest, v1::ExperimentListResponse> kExperimentList{
    "experiment.list", Right::kUser};
inline constexpr RpcMethod<v1::HoldRequest, v1::CancelResponse> kJobHold{"job.hold", Right::kUser};
inline constexpr RpcMethod<v1::RequeueRequest, v1::CancelResponse> kJobRequeue{"job.requeue",
                                                                               Right::kUser};
inline constexpr RpcMethod<v1::JobLogsRequest, v1::JobLogsResponse> kJobLogs{"job.logs",
                                                                             Right::kUser};
inline constexpr RpcMethod<v1::JobResultsRequest, v1::JobResultsResponse> kJobResults{"job.results",
                                                                                      Right::kUser};
inline constexpr RpcMethod<v1::ShowJobRequest, v1::ShowJobResponse> kJobShow{"job.show",
                                                                             Right::kUser};
inline constexpr RpcMethod<v1::ListJobsRequest, v1::ListJobsResponse> kJobList{"job.list",
                                                                               Right::kUser};
inline constexpr RpcMethod<v1::PoolStatusRequest, v1::PoolStatusResponse> kPoolStatus{"pool.status",
                                                                                      Right::kUser};

// --- Served by the master: accounting and billing ---
inline constexpr RpcMethod<v1::InvoiceRequest, v1::InvoiceResponse> kBillingInvoice{
    "billing.invoice", Right::kUser};
inline constexpr RpcMethod<v1::UsageRequest, v1::UsageResponse> kBillingUsage{"billing.usage",
                                                                              Right::kUser};
inline constexpr RpcMethod<v1::ReportRequest, v1::ReportResponse> kBillingReport{"billing.report",
                                                                                 Right::kUser};
inline constexpr RpcMethod<v1::CreditRequest, v1::CreditResponse> kBillingCredit{"billing.credit",
                                                                                 Right::kAdmin};

// --- Served by the master: policy and administration ---
inline constexpr RpcMethod<v1::PolicyGetRequest, v1::PolicyGetResponse> kPolicyGet{
    "admin.policy.get", Right::kUser};
inline constexpr RpcMethod<v1::TenantMembersRequest, v1::PolicySetResponse> kTenantMembers{
    "admin.tenant.members", Right::kUser};  // the handler requires a coordinator or an admin
inline constexpr RpcMethod<v1::SetQueueRequest, v1::PolicySetResponse> kQueueSet{"admin.queue.set",
                                                                                 Right::kAdmin};
inline constexpr RpcMethod<v1::SetTenantRequest, v1::PolicySetResponse> kTenantSet{
    "admin.tenant.set", Right::kAdmin};
inline constexpr RpcMethod<v1::DrainRequest, v1::DrainResponse> kDrain{"admin.drain",
                                                                       Right::kOperator};
inline constexpr RpcMethod<v1::SimFaultRequest, v1::SimFaultResponse> kSimFault{"admin.sim_fault",
                                                                                Right::kOperator};
inline constexpr RpcMethod<v1::BoardMarkRequest, v1::BoardMarkResponse> kBoardMark{
    "admin.board.mark", Right::kOperator};
inline constexpr RpcMethod<v1::ReservationCreateRequest, v1::ReservationCreateResponse>
    kReservationCreate{"admin.reservation.create", Right::kOperator};
inline constexpr RpcMethod<v1::ReservationListRequest, v1::ReservationListResponse>
    kReservationList{"admin.reservation.list", Right::kUser};
inline constexpr RpcMethod<v1::ReservationDeleteRequest, v1::ReservationDeleteResponse>
    kReservationDelete{"admin.reservation.delete", Right::kOperator};

// --- Served by the master: access tokens for the HTTP API ---
inline constexpr RpcMethod<v1::TokenCreateRequest, v1::TokenCreateResponse> kTokenCreate{
    "token.create", Right::kUser};  // the handler requires a MUNGE-proved caller
inline constexpr RpcMethod<v1::TokenListRequest, v1::TokenListResponse> kTokenList{"token.list",
                                                                                   Right::kUser};
inline constexpr RpcMethod<v1::TokenRevokeRequest, v1::TokenRevokeResponse> kTokenRevoke{
    "token.revoke", Right::kUser};

// --- Served by the master: nodes (enrolment, registration, reports) ---
inline constexpr RpcMethod<v1::NodeTokenRequest, v1::NodeTokenResponse> kNodeToken{"node.token",
                                                                                   Right::kAdmin};
inline constexpr RpcMethod<v1::NodeAddRequest, v1::NodeAddResponse> kNodeAdd{"node.add",
                                                                             Right::kAdmin};
inline constexpr RpcMethod<v1::NodeRevokeRequest, v1::NodeRevokeResponse> kNodeRevoke{
    "node.revoke", Right::kAdmin};
inline constexpr RpcMethod<v1::EnrolRequest, v1::EnrolResponse> kNodeEnrol{
    "node.enrol", Right::kEnrol};  // the handler checks the one-time join token
inline constexpr RpcMethod<v1::RenewRequest, v1::RenewResponse> kNodeRenew{"node.renew",
                                                                           Right::kNode};
inline constexpr RpcMethod<v1::RegisterRequest, v1::RegisterResponse> kNodeRegister{
    "master.register", Right::kNode};
inline constexpr RpcMethod<v1::HeartbeatRequest, v1::HeartbeatResponse> kNodeHeartbeat{
    "master.heartbeat", Right::kNode};
inline constexpr RpcMethod<v1::TaskStatusReport, v1::TaskStatusAck> kNodeTaskStatus{
    "master.task_status", Right::kNode};

// --- Served by the master: another master (high availability) ---
inline constexpr RpcMethod<v1::HaSnapshotRequest, v1::HaSnapshotResponse> kHaSnapshot{
    "ha.snapshot", Right::kMaster};

// --- Served by the agent, for the master ---
inline constexpr RpcMethod<v1::LaunchRequest, v1::LaunchResponse> kAgentLaunch{"agent.launch",
                                                                               Right::kMaster};
inline constexpr RpcMethod<v1::KillRequest, v1::KillResponse> kAgentKill{"agent.kill",
                                                                         Right::kMaster};
inline constexpr RpcMethod<v1::TaskOutputRequest, v1::TaskOutputResponse> kAgentTaskOutput{
    "agent.task_output", Right::kMaster};
inline constexpr RpcMethod<v1::SimFaultRequest, v1::SimFaultResponse> kAgentSimFault{
    "agent.sim_fault", Right::kMaster};
inline constexpr RpcMethod<v1::ExperimentBatch, v1::ExperimentBatchResponse> kAgentRunExperiments{
    "agent.run_experiments", Right::kMaster};

// Every method the master serves, and every method an agent serves.
inline constexpr std::array<RpcMethodInfo, 38> kMasterMethods = {
    kJobSubmit,         kJobCancel,       kJobHold,           kJobRequeue,       kJobLogs,
    kJobShow,           kJobList,         kPoolStatus,        kBillingInvoice,   kBillingUsage,
    kBillingReport,     kBillingCredit,   kPolicyGet,         kTenantMembers,    kQueueSet,
    kTenantSet,         kDrain,           kSimFault,          kBoardMark,        kNodeToken,
    kNodeEnrol,         kNodeRenew,       kNodeRegister,      kNodeHeartbeat,    kNodeTaskStatus,
    kHaSnapshot,        kNodeAdd,         kNodeRevoke,        kTokenCreate,      kTokenList,
    kTokenRevoke,       kJobResults,      kJobKeepalive,      kExperimentSubmit, kExperimentList,
    kReservationCreate, kReservationList, kReservationDelete,
};
inline constexpr std::array<RpcMethodInfo, 5> kAgentMethods = {
    kAgentLaunch, kAgentKill, kAgentTaskOutput, kAgentSimFault, kAgentRunExperiments};

}  // namespace rpc
}  // namespace snn
