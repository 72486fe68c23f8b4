#include "cli/job_control_commands.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "cli/session.h"
#include "common/base/array_spec.h"

namespace snn {

int ExitCodeOf(const v1::JobRecord& job) {
  switch (job.state()) {
    case v1::COMPLETED:
      return 0;
    case v1::FAILED:
      return job.exit_code() > 0 && job.exit_code() < 256 ? job.exit_code() : 1;
    case v1::TIMEOUT:
      return 124;
    default:
      return 125;
  }
}

namespace {

// Runs `call` for each job ID among the operands, on one session; a failure is reported and
// the rest still run. Returns 0 if every call succeeded.
// Each may name an array's elements (7_5, 7_[100-200]); `call` gets the reference and the
// operand as written.
int ForEachJobId(
    const CliOptions& o, std::ostream& err, const std::string& usage,
    const std::function<Status(RpcClient&, const v1::JobRef&, const std::string&)>& call) {
  if (o.args.size() < 2) return Fail(err, InvalidArgument("usage: " + usage));
  std::vector<v1::JobRef> refs;
  for (size_t i = 1; i < o.args.size(); ++i) {
    auto ref = ParseJobRef(o.args[i]);
    if (!ref.ok()) return Fail(err, ref.status());
    refs.push_back(*ref);
  }
  Session session(o);
  if (Status s = session.Open(); !s.ok()) return Fail(err, s);
  int rc = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (Status s = call(session.client(), refs[i], o.args[i + 1]); !s.ok()) rc = Fail(err, s);
  }
  return rc;
}

}  // namespace

Result<uint64_t> ParseJobId(const std::string& text) {
  uint64_t id = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || ptr != text.data() + text.size() || id == 0) {
    return InvalidArgument("job ID '" + text + "' is not a positive number");
  }
  return id;
}

Result<v1::JobRef> ParseJobRef(const std::string& text) {
  auto sel = ParseArraySelection(text);
  if (!sel.ok()) {
    return InvalidArgument("job ID '" + text.substr(0, 64) +
                           "' is not a positive number (or ARRAY_INDEX, ARRAY_[A-B,C])");
  }
  v1::JobRef ref;
  ref.set_tenant_job_id(sel->job_id);
  for (const auto& r : sel->ranges) *ref.add_array_indices() = r;
  return ref;
}

int Cancel(const CliOptions& o, std::ostream& out, std::ostream& err) {
  return ForEachJobId(o, err, "snnctl cancel JOBID...",
                      [&](RpcClient& client, const v1::JobRef& ref, const std::string& named) {
                        v1::CancelRequest req;
                        *req.mutable_job() = ref;
                        auto resp = client.Call(rpc::kJobCancel, req);
                        if (resp.ok()) out << "Cancelled job " << named << "\n";
                        return resp.status();
                      });
}

int HoldOrRelease(const CliOptions& o, std::ostream& out, std::ostream& err) {
  const bool release = o.args[0] == "release";
  return ForEachJobId(o, err, "snnctl " + o.args[0] + " JOBID...",
                      [&](RpcClient& client, const v1::JobRef& ref, const std::string& named) {
                        v1::HoldRequest req;
                        *req.mutable_job() = ref;
                        req.set_release(release);
                        auto resp = client.Call(rpc::kJobHold, req);
                        if (resp.ok())
                          out << (release ? "Released job " : "Held job ") << named << "\n";
                        return resp.status();
                      });
}

// Polls the job until it ends (a master that does not answer is asked again).
int Requeue(const CliOptions& o, std::ostream& out, std::ostream& err) {
  return ForEachJobId(o, err, "snnctl requeue JOBID...",
                      [&](RpcClient& client, const v1::JobRef& ref, const std::string& named) {
                        v1::RequeueRequest req;
                        *req.mutable_job() = ref;
                        auto resp = client.Call(rpc::kJobRequeue, req);
                        if (resp.ok()) out << "Requeued job " << named << "\n";
                        return resp.status();
                      });
}

int Logs(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2) {
    return Fail(err, InvalidArgument("usage: snnctl logs JOBID [--task N] [--stderr] [-f]"));
  }
  auto ref = ParseJobRef(o.args[1]);
  if (!ref.ok()) return Fail(err, ref.status());
  v1::JobLogsRequest req;
  *req.mutable_job() = *ref;
  req.set_task(o.task);
  req.set_stderr(o.stderr_stream);
  req.set_max_bytes(1 << 20);
  Session session(o);
  if (Status s = session.Open(); !s.ok()) return Fail(err, s);
  uint32_t attempt = 0;
  for (;;) {
    auto resp = session.client().Call(rpc::kJobLogs, req);
    if (!resp.ok() && o.follow && resp.status().code() == Code::kFailedPrecondition) {
      CliClock().SleepMs(500);  // not started yet
      continue;
    }
    if (!resp.ok()) return Fail(err, resp.status());
    if (attempt != 0 && resp->attempt() != attempt) {
      // Requeued and started again: its new attempt writes a new file.
      out << "--- job " << o.args[1] << " attempt " << resp->attempt() << " on " << resp->node()
          << " ---\n";
      req.set_offset(0);
      attempt = resp->attempt();
      continue;
    }
    attempt = resp->attempt();
    out << resp->data();
    out.flush();
    req.set_offset(resp->offset() + resp->data().size());
    if (req.offset() < resp->size()) continue;  // more to read now
    if (!o.follow || (resp->state() != v1::PENDING && resp->state() != v1::RUNNING)) return 0;
    CliClock().SleepMs(500);
  }
}

int WaitForEnd(const CliOptions& o, const v1::SubmitResponse& submitted, std::ostream& out,
               std::ostream& err) {
  v1::ShowJobRequest req;
  req.mutable_job()->set_tenant(submitted.tenant());
  req.mutable_job()->set_tenant_job_id(submitted.tenant_job_id());
  int delay_ms = 200;
  int unreachable = 0;
  while (true) {
    auto resp = Call(o, rpc::kJobShow, req);
    if (resp.ok()) {
      unreachable = 0;
      const v1::JobRecord& job = resp->job();
      if (job.state() != v1::PENDING && job.state() != v1::RUNNING) {
        if (!o.parsable && o.output != "json") {
          out << "Job " << submitted.tenant_job_id() << " " << v1::JobState_Name(job.state())
              << (job.reason().empty() ? "" : ": " + job.reason()) << "\n";
        }
        return ExitCodeOf(job);
      }
    } else if (resp.status().code() == Code::kUnavailable && ++unreachable < 60) {
      // The master restarting: keep asking, for about two minutes at most.
    } else {
      return Fail(err, resp.status());
    }
    CliClock().SleepMs(delay_ms);
    delay_ms = std::min(delay_ms * 2, 2000);
  }
}

}  // namespace snn
