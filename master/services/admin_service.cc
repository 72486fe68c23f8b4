#include "master/services/admin_service.h"

#include <glog/logging.h>

#include <map>
#include <string>
#include <vector>

namespace snn {

void AdminService::Register(MethodRouter& router) {
  router.Add(rpc::kDrain,
             [this](const CallContext& ctx, v1::DrainRequest req, Responder<v1::DrainResponse> r) {
               Drain(ctx, std::move(req), r);
             });
  router.Add(rpc::kSimFault,
             [this](const CallContext& ctx, v1::SimFaultRequest req,
                    Responder<v1::SimFaultResponse> r) { SimFault(ctx, std::move(req), r); });
  router.Add(rpc::kBoardMark,
             [this](const CallContext& ctx, v1::BoardMarkRequest req,
                    Responder<v1::BoardMarkResponse> r) { MarkBoard(ctx, std::move(req), r); });
}

void AdminService::Drain(const CallContext& ctx, v1::DrainRequest req,
                         Responder<v1::DrainResponse> r) {
  std::string reason;
  if (req.drain()) {
    reason = req.reason().empty() ? "drained by " + ctx.identity.user : req.reason();
    if (reason.size() > 256) return r.Fail(InvalidArgument("the reason is longer than 256 bytes"));
  }
  if (Status s = nodes_.SetDrain(req.node(), req.board(), reason); !s.ok()) return r.Fail(s);
  LOG(INFO) << ctx.identity.Describe() << (req.drain() ? " drained " : " resumed ") << req.node()
            << (req.board() >= 0 ? "/" + std::to_string(req.board()) : "");
  journal_.PutNode(nodes_.Find(req.node())->record);
  if (!req.drain()) request_schedule_();  // resumed boards may start waiting jobs
  journal_.Commit([r] { r.Ok(v1::DrainResponse()); });
}

void AdminService::SimFault(const CallContext& ctx, v1::SimFaultRequest req,
                            Responder<v1::SimFaultResponse> r) {
  NodeEntry* node = nodes_.Find(req.node());
  if (node == nullptr) return r.Fail(NotFound("no node named '" + req.node() + "'"));
  if (node->session == nullptr) {
    return r.Fail(Unavailable("node " + req.node() + " is DOWN: " + node->down_reason));
  }
  LOG(INFO) << ctx.identity.Describe() << " injects a fault: " << req.ShortDebugString();
  // The agent re-registers with the new board description before it answers, so once the
  // answer is here (and the journal has synced it) the master's free map knows the core is dead.
  agents_.SimFault(req.node(), req, [this, r](Result<v1::SimFaultResponse> resp) {
    if (!resp.ok()) return r.Fail(resp.status());
    journal_.Commit([r, out = *resp] { r.Ok(out); });
  });
}

void AdminService::MarkBoard(const CallContext& ctx, v1::BoardMarkRequest req,
                             Responder<v1::BoardMarkResponse> r) {
  if (req.set_size() + req.unset_size() > static_cast<int>(NodeRegistry::kMaxBoardMarks)) {
    return r.Fail(InvalidArgument("at most " + std::to_string(NodeRegistry::kMaxBoardMarks) +
                                  " attributes in one change"));
  }
  const std::map<std::string, std::string> set(req.set().begin(), req.set().end());
  const std::vector<std::string> unset(req.unset().begin(), req.unset().end());
  if (Status s = nodes_.SetMarks(req.node(), req.board(), set, unset); !s.ok()) return r.Fail(s);
  const v1::NodeRecord& record = nodes_.Find(req.node())->record;
  LOG(INFO) << ctx.identity.Describe() << " changed the marks of board " << req.node() << "/"
            << req.board() << ": " << req.ShortDebugString();
  journal_.PutNode(record);
  request_schedule_();  // jobs waiting for such boards may start
  v1::BoardMarkResponse out;
  if (auto marks = record.board_marks().find(req.board()); marks != record.board_marks().end()) {
    out.mutable_marks()->insert(marks->second.values().begin(), marks->second.values().end());
  }
  journal_.Commit([r, out] { r.Ok(out); });
}

}  // namespace snn
