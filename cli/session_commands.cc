#include "cli/session_commands.h"

#include <atomic>
#include <charconv>
#include <csignal>

#include "cli/job_control_commands.h"
#include "cli/session.h"
#include "common/base/duration.h"

namespace snn {
namespace {

std::atomic<int> g_stop_signal{0};
void StopOnSignal(int signal) { g_stop_signal = signal; }

Result<uint32_t> Number(const CliOptions& o, const std::string& name, uint32_t fallback) {
  auto it = o.settings.find(name);
  if (it == o.settings.end()) return fallback;
  uint32_t n = 0;
  const std::string& v = it->second;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size()) {
    return InvalidArgument("--" + name + " must be a number (it is '" + v + "')");
  }
  return n;
}

Result<uint64_t> Seconds(const CliOptions& o, const std::string& name) {
  auto it = o.settings.find(name);
  if (it == o.settings.end()) return 0;
  auto s = ParseDurationSeconds(it->second);
  if (!s.ok()) return InvalidArgument("--" + name + ": " + s.status().message());
  return *s;
}

Result<v1::JobSpec> SessionSpec(const CliOptions& o) {
  v1::JobSpec spec;
  spec.set_kind(v1::SESSION);
  spec.set_name(o.setting("name").empty() ? "session" : o.setting("name"));
  spec.set_pool(o.setting("pool"));
  spec.set_queue(o.setting("queue"));
  v1::Resources& r = *spec.mutable_task()->mutable_resources();
  r.set_board_type(o.board_type);
  if (std::string shape = o.setting("shape"); !shape.empty()) {
    uint32_t w = 0, h = 0;
    const size_t x = shape.find('x');
    auto [p1, e1] =
        std::from_chars(shape.data(), shape.data() + (x == std::string::npos ? 0 : x), w);
    auto [p2, e2] = x == std::string::npos
                        ? std::from_chars_result{nullptr, std::errc::invalid_argument}
                        : std::from_chars(shape.data() + x + 1, shape.data() + shape.size(), h);
    if (e1 != std::errc() || e2 != std::errc() || p2 != shape.data() + shape.size() || w == 0 ||
        h == 0) {
      return InvalidArgument("--shape must be WIDTHxHEIGHT, such as 4x2 (it is '" + shape + "')");
    }
    r.set_shape_width(w);
    r.set_shape_height(h);
    r.set_cores(w * h);
  } else {
    auto cores = Number(o, "cores", 1);
    if (!cores.ok()) return cores.status();
    r.set_cores(*cores);
  }
  auto ksps = Number(o, "ksps", 1);
  auto streams = Number(o, "streams", 1);
  auto replicas = Number(o, "replicas", 1);
  auto keepalive = Seconds(o, "keepalive");
  auto limit = Seconds(o, "time-limit");
  for (const Status& s :
       {ksps.status(), streams.status(), replicas.status(), keepalive.status(), limit.status()}) {
    if (!s.ok()) return s;
  }
  r.set_ksps(*ksps);
  r.set_streams(*streams);
  spec.set_min_replicas(*replicas);
  spec.set_max_replicas(*replicas);
  if (*keepalive > UINT32_MAX) return InvalidArgument("--keepalive is too long");
  spec.set_keepalive_s(static_cast<uint32_t>(*keepalive));
  spec.set_time_limit_s(*limit);
  return spec;
}

// Renews the session once: when it must be renewed again by, or why it cannot be.
Result<v1::KeepaliveResponse> Renew(RpcClient& client, const v1::JobRef& ref, uint32_t keepalive) {
  v1::KeepaliveRequest req;
  *req.mutable_job() = ref;
  req.set_keepalive_s(keepalive);
  return client.Call(rpc::kJobKeepalive, req);
}

void PrintGrant(const v1::JobRecord& job, std::ostream& out) {
  out << "Granted session " << job.tenant_job_id() << " (keepalive "
      << FormatDurationUnit(job.spec().keepalive_s()) << "):";
  for (const auto& t : job.tasks()) {
    const v1::CoreRect& r = t.mapping().rect();
    out << " task " << t.index() << " on " << t.node() << "/board" << t.board() << " cores "
        << r.width() << "x" << r.height() << " at " << r.x() << "," << r.y() << ";";
  }
  out << "\nexport SNN_ALLOC=" << job.tenant_job_id() << "\n";
  out.flush();
}

}  // namespace

int Alloc(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 1) return Fail(err, InvalidArgument("usage: snnctl alloc [options]"));
  Session session(o);
  if (Status s = session.Open(); !s.ok()) return Fail(err, s);
  RpcClient& client = session.client();
  if (!o.setting("renew").empty()) {
    auto id = ParseJobId(o.setting("renew"));
    auto keepalive = Seconds(o, "keepalive");
    if (!id.ok()) return Fail(err, id.status());
    if (!keepalive.ok()) return Fail(err, keepalive.status());
    v1::JobRef ref;
    ref.set_tenant_job_id(*id);
    auto renewed = Renew(client, ref, static_cast<uint32_t>(*keepalive));
    if (!renewed.ok()) return Fail(err, renewed.status());
    out << "Renewed session " << *id << " (keepalive " << FormatDurationUnit(renewed->keepalive_s())
        << ")\n";
    return 0;
  }
  auto spec = SessionSpec(o);
  if (!spec.ok()) return Fail(err, spec.status());
  v1::SubmitRequest submit;
  *submit.mutable_spec() = *spec;
  auto submitted = client.Call(rpc::kJobSubmit, submit);
  if (!submitted.ok()) return Fail(err, submitted.status());
  v1::JobRef ref;
  ref.set_tenant(submitted->tenant());
  ref.set_tenant_job_id(submitted->tenant_job_id());
  std::signal(SIGINT, StopOnSignal);
  std::signal(SIGTERM, StopOnSignal);
  std::signal(SIGHUP, StopOnSignal);
  // Asks often at first (a grant on an idle pool is quick), renewing as it waits.
  int64_t next_renew_ms = 0;
  int64_t pause_ms = 5;
  bool granted = false;
  v1::ShowJobRequest show;
  *show.mutable_job() = ref;
  for (;;) {
    if (g_stop_signal != 0) break;
    const int64_t now = CliClock().NowMs();
    uint32_t keepalive = spec->keepalive_s();
    if (now >= next_renew_ms) {
      auto renewed = Renew(client, ref, 0);
      if (!renewed.ok()) return Fail(err, renewed.status());
      keepalive = renewed->keepalive_s();
      next_renew_ms = now + std::max<int64_t>(keepalive * 1000 / 3, 100);
    }
    if (!granted) {
      auto job = client.Call(rpc::kJobShow, show);
      if (!job.ok()) return Fail(err, job.status());
      if (job->job().state() == v1::RUNNING) {
        granted = true;
        PrintGrant(job->job(), out);
        if (o.detach) return 0;
      } else if (job->job().state() != v1::PENDING) {
        err << "snnctl: session " << ref.tenant_job_id() << " "
            << v1::JobState_Name(job->job().state()) << ": " << job->job().reason() << "\n";
        return 1;
      }
    }
    CliClock().SleepMs(granted ? std::min<int64_t>(100, next_renew_ms - CliClock().NowMs())
                               : pause_ms);
    pause_ms = std::min<int64_t>(pause_ms * 2, 500);
  }
  v1::CancelRequest cancel;
  *cancel.mutable_job() = ref;
  auto released = client.Call(rpc::kJobCancel, cancel);
  if (!released.ok()) return Fail(err, released.status());
  out << "Released session " << ref.tenant_job_id() << "\n";
  return 0;
}

int Run(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() < 2) {
    return Fail(err, InvalidArgument("usage: snnctl run --alloc ID [--task N] COMMAND [ARGS...]"));
  }
  std::string alloc = o.setting("alloc");
  if (alloc.empty()) {
    const char* env = std::getenv("SNN_ALLOC");
    if (env != nullptr) alloc = env;
  }
  if (alloc.empty()) {
    return Fail(err, InvalidArgument("run needs a session: --alloc ID (or SNN_ALLOC)"));
  }
  auto id = ParseJobId(alloc);
  if (!id.ok()) return Fail(err, id.status());
  v1::SubmitRequest submit;
  v1::JobSpec& spec = *submit.mutable_spec();
  spec.set_kind(v1::STEP);
  spec.set_alloc(*id);
  spec.set_alloc_task(o.task);
  spec.set_name(o.args[1]);
  spec.mutable_task()->set_command(o.args[1]);
  for (size_t i = 2; i < o.args.size(); ++i) spec.mutable_task()->add_args(o.args[i]);
  Session session(o);
  if (Status s = session.Open(); !s.ok()) return Fail(err, s);
  auto submitted = session.client().Call(rpc::kJobSubmit, submit);
  if (!submitted.ok()) return Fail(err, submitted.status());
  v1::ShowJobRequest show;
  show.mutable_job()->set_tenant(submitted->tenant());
  show.mutable_job()->set_tenant_job_id(submitted->tenant_job_id());
  int64_t pause_ms = 2;
  v1::JobRecord job;
  for (;;) {
    auto shown = session.client().Call(rpc::kJobShow, show);
    if (!shown.ok()) return Fail(err, shown.status());
    job = shown->job();
    if (job.state() != v1::PENDING && job.state() != v1::RUNNING) break;
    CliClock().SleepMs(pause_ms);
    pause_ms = std::min<int64_t>(pause_ms * 2, 500);
  }
  for (bool to_stderr : {false, true}) {
    v1::JobLogsRequest logs;
    *logs.mutable_job() = show.job();
    logs.set_stderr(to_stderr);
    logs.set_max_bytes(1 << 20);
    for (;;) {
      auto slice = session.client().Call(rpc::kJobLogs, logs);
      if (!slice.ok()) break;  // never started: nothing written
      (to_stderr ? err : out) << slice->data();
      logs.set_offset(slice->offset() + slice->data().size());
      if (slice->data().empty() || logs.offset() >= slice->size()) break;
    }
  }
  if (job.state() != v1::COMPLETED) {
    err << "snnctl: step " << submitted->tenant_job_id() << " " << v1::JobState_Name(job.state())
        << ": " << job.reason() << "\n";
  }
  return ExitCodeOf(job);
}

}  // namespace snn
