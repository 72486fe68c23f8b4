#include "master/http/rest_routes.h"

namespace snn {
namespace {

template <typename Req, typename Resp>
RestRoute Route(std::string verb, std::string path, const RpcMethod<Req, Resp>& method,
                std::string summary, RestBody body = RestBody::kNone,
                std::vector<RestParam> params = {},
                std::vector<std::pair<std::string, std::string>> fixed = {}) {
  return RestRoute{
      std::move(verb),   std::move(path),   std::move(summary), std::string(method.name),
      method.right,      Req::descriptor(), Resp::descriptor(), body,
      std::move(params), std::move(fixed)};
}

// A job named by the caller's tenant's job id, and another tenant of the caller's.
std::vector<RestParam> JobParams() {
  return {{"id", "job.tenant_job_id", true, "the job's id in its tenant (as snnctl shows it)"},
          {"tenant", "job.tenant", false, "the job's tenant (default: the caller's)"}};
}

// An experiment service, named as a job is.
std::vector<RestParam> ServiceParams() {
  return {{"id", "service", true, "the service's job id in its tenant"},
          {"tenant", "service_tenant", false, "the service's tenant (default: the caller's)"}};
}

}  // namespace

const std::vector<RestRoute>& RestRoutes() {
  static const std::vector<RestRoute> routes = [] {
    std::vector<RestRoute> r;
    // Jobs.
    r.push_back(Route("POST", "/v1/jobs", rpc::kJobSubmit,
                      "Submit a job: the body is a job file (YAML or JSON), as snnctl submit reads",
                      RestBody::kJobDocument));
    r.push_back(Route("GET", "/v1/jobs", rpc::kJobList, "List jobs (snnctl jobs)"));
    r.push_back(Route("GET", "/v1/jobs/{id}", rpc::kJobShow, "One job (snnctl show)",
                      RestBody::kNone, JobParams()));
    r.push_back(Route("POST", "/v1/jobs/{id}/cancel", rpc::kJobCancel, "Cancel a job",
                      RestBody::kNone, JobParams()));
    r.push_back(Route("POST", "/v1/jobs/{id}/hold", rpc::kJobHold, "Hold a pending job",
                      RestBody::kNone, JobParams()));
    r.push_back(Route("POST", "/v1/jobs/{id}/release", rpc::kJobHold, "Release a held job",
                      RestBody::kNone, JobParams(), {{"release", "true"}}));
    r.push_back(Route("POST", "/v1/jobs/{id}/keepalive", rpc::kJobKeepalive,
                      "Renew a session (snnctl alloc --renew); keepalive_s= changes its keepalive",
                      RestBody::kNone, JobParams()));
    r.push_back(Route("POST", "/v1/jobs/{id}/requeue", rpc::kJobRequeue, "Requeue a running job",
                      RestBody::kNone, JobParams()));
    r.push_back(Route("GET", "/v1/jobs/{id}/logs", rpc::kJobLogs,
                      "A slice of a task's stdout or stderr (snnctl logs)", RestBody::kNone,
                      JobParams()));
    r.push_back(Route("GET", "/v1/jobs/{id}/results", rpc::kJobResults,
                      "A task's result files and their provenance, or (file=) a slice of one "
                      "(snnctl results)",
                      RestBody::kNone, JobParams()));
    // Experiment services.
    r.push_back(Route("POST", "/v1/services/{id}/experiments", rpc::kExperimentSubmit,
                      "Send experiments to an experiment service (snnctl experiment submit)",
                      RestBody::kMessage, ServiceParams()));
    r.push_back(Route("GET", "/v1/services/{id}/experiments", rpc::kExperimentList,
                      "Your experiments in a service, with their results (outputs=true) "
                      "(snnctl experiment list)",
                      RestBody::kNone, ServiceParams()));
    // The pool, accounting and billing.
    r.push_back(
        Route("GET", "/v1/pool", rpc::kPoolStatus, "Nodes and boards (snnctl pool status)"));
    r.push_back(Route("GET", "/v1/usage", rpc::kBillingUsage, "Usage records (snnctl usage)"));
    r.push_back(Route("GET", "/v1/report", rpc::kBillingReport, "Usage totals (snnctl report)"));
    r.push_back(
        Route("GET", "/v1/invoice", rpc::kBillingInvoice, "A tenant's invoice (snnctl invoice)"));
    r.push_back(Route("POST", "/v1/credits", rpc::kBillingCredit,
                      "Credit (or correct) a tenant's account", RestBody::kMessage));
    // Policy.
    r.push_back(Route("GET", "/v1/policy", rpc::kPolicyGet, "The scheduling policy"));
    r.push_back(Route("POST", "/v1/tenants/{tenant}/members", rpc::kTenantMembers,
                      "Add or remove a tenant's members (its coordinators, or an admin)",
                      RestBody::kMessage, {{"tenant", "tenant", true, "the tenant"}}));
    r.push_back(
        Route("PUT", "/v1/queues", rpc::kQueueSet, "Set (or create) a queue", RestBody::kMessage));
    r.push_back(Route("PUT", "/v1/tenants", rpc::kTenantSet, "Set (or create) a tenant",
                      RestBody::kMessage));
    // Nodes.
    r.push_back(Route("POST", "/v1/nodes/{node}/drain", rpc::kDrain,
                      "Drain a node or one of its boards", RestBody::kMessage,
                      {{"node", "node", true, "the node"}}, {{"drain", "true"}}));
    r.push_back(Route("POST", "/v1/nodes/{node}/resume", rpc::kDrain,
                      "Resume a drained node or board", RestBody::kMessage,
                      {{"node", "node", true, "the node"}}, {{"drain", "false"}}));
    r.push_back(Route("POST", "/v1/nodes/{node}/token", rpc::kNodeToken,
                      "A one-time join token for a new node", RestBody::kNone,
                      {{"node", "node", true, "the node"}}));
    r.push_back(Route("POST", "/v1/nodes", rpc::kNodeAdd, "Approve a node's inventory",
                      RestBody::kMessage));
    r.push_back(Route("POST", "/v1/nodes/{node}/revoke", rpc::kNodeRevoke,
                      "Revoke a node's certificates", RestBody::kNone,
                      {{"node", "node", true, "the node"}}));
    r.push_back(Route("POST", "/v1/nodes/{node}/marks", rpc::kBoardMark,
                      "Set or remove a board's marks (attributes constraints test)",
                      RestBody::kMessage, {{"node", "node", true, "the node"}}));
    r.push_back(Route("POST", "/v1/nodes/{node}/faults", rpc::kSimFault,
                      "Inject a fault into a simulated board (snnctl sim ...)", RestBody::kMessage,
                      {{"node", "node", true, "the node"}}));
    // Advance reservations (snnctl reservation ...).
    r.push_back(
        Route("GET", "/v1/reservations", rpc::kReservationList, "Every advance reservation"));
    r.push_back(Route("POST", "/v1/reservations", rpc::kReservationCreate,
                      "Create an advance reservation", RestBody::kMessage));
    r.push_back(Route("DELETE", "/v1/reservations/{name}", rpc::kReservationDelete,
                      "Delete an advance reservation", RestBody::kNone,
                      {{"name", "name", true, "the reservation"}}));
    // Access tokens (made with snnctl token create, where MUNGE proves who you are).
    r.push_back(Route("GET", "/v1/tokens", rpc::kTokenList, "Your access tokens"));
    r.push_back(Route("POST", "/v1/tokens", rpc::kTokenCreate,
                      "Refused: a token cannot make tokens (snnctl token create, with MUNGE)",
                      RestBody::kMessage));
    r.push_back(Route("DELETE", "/v1/tokens/{id}", rpc::kTokenRevoke, "Revoke an access token",
                      RestBody::kNone, {{"id", "id", true, "the token's id"}}));
    return r;
  }();
  return routes;
}

}  // namespace snn
