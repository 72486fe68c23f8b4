#include "cli/accounting_commands.h"

#include <charconv>
#include <cstdio>
#include <sstream>
#include <vector>

#include "cli/format.h"
#include "cli/session.h"
#include "cli/time_arg.h"
#include "common/base/clock.h"
#include "common/base/duration.h"

namespace snn {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::string FormatUsage(const v1::UsageResponse& usage, bool csv) {
  std::vector<std::vector<std::string>> rows = {
      {"JOBID", "TASK",   "TRY",  "TENANT", "USER",   "POOL", "BOARD", "START", "END",  "ELAPSED",
       "CORES", "CORE_S", "KSPS", "KSPS_S", "SPIKES", "EXIT", "STATE", "KIND",  "IDLE", "BUSY"}};
  for (const auto& r : usage.records()) {
    const int64_t end = r.end_ms() == 0 ? usage.now_ms() : r.end_ms();
    const int64_t elapsed_s = std::max<int64_t>(0, end - r.start_ms()) / 1000;
    double seconds = static_cast<double>(std::max<int64_t>(0, end - r.start_ms())) / 1000;
    // What is billed: an experiment record's board time; a service's held time less its users'.
    const double busy_s = static_cast<double>(r.busy_us()) / 1e6;
    if (r.kind() == "experiment") seconds = busy_s;
    if (r.kind() == "service") seconds = std::max(0.0, seconds - busy_s);
    rows.push_back(
        {r.array_job_id() != 0
             ? std::to_string(r.array_job_id()) + "_" + std::to_string(r.array_task_id())
             : std::to_string(r.tenant_job_id()),
         std::to_string(r.task()),
         std::to_string(r.attempt()),
         r.tenant(),
         r.user(),
         r.pool(),
         r.board_type().empty() ? "-" : r.board_type(),
         FormatTimestamp(r.start_ms()),
         r.end_ms() == 0 ? "-" : FormatTimestamp(r.end_ms()),
         csv ? std::to_string(elapsed_s) : FormatDurationSeconds(static_cast<uint64_t>(elapsed_s)),
         std::to_string(r.cores()),
         Fixed(seconds * r.cores(), 1),
         std::to_string(r.ksps()),
         Fixed(seconds * r.ksps(), 1),
         std::to_string(r.spikes()),
         r.end_ms() == 0 ? "-" : std::to_string(r.exit_code()),
         r.state().rfind("TASK_", 0) == 0 ? r.state().substr(5) : r.state(),
         r.kind().empty()     ? "batch"
         : r.kind() == "step" ? "step@" + std::to_string(r.session())
                              : r.kind(),
         r.kind() != "session" ? "-"
         : csv                 ? std::to_string(r.idle_ms() / 1000)
                               : FormatDurationSeconds(static_cast<uint64_t>(r.idle_ms() / 1000)),
         r.kind() == "experiment" || r.kind() == "service" ? Fixed(busy_s, 3) : "-"});
  }
  std::string text;
  if (csv) {
    for (const auto& row : rows) {
      for (size_t i = 0; i < row.size(); ++i) text += (i ? "," : "") + CsvField(row[i]);
      text += "\n";
    }
  } else {
    text = FormatTable(rows);
  }
  return text;  // a truncated listing is said on stderr by the caller: the output stays parseable
}

std::string FormatReport(const v1::ReportResponse& report, bool by_user) {
  std::ostringstream out;
  out << "Usage from " << FormatTimestamp(report.from_ms()) << " to "
      << FormatTimestamp(report.to_ms()) << "\n";
  std::vector<std::vector<std::string>> rows;
  if (by_user) {
    rows.push_back({"TENANT", "USER", "POOL", "CORE_HOURS", "KSPS_HOURS", "JOBS", "MEAN_WAIT"});
  } else {
    rows.push_back({"TENANT", "POOL", "CORE_HOURS", "KSPS_HOURS", "JOBS", "MEAN_WAIT"});
  }
  for (const auto& r : report.rows()) {
    std::vector<std::string> row = {r.tenant()};
    if (by_user) row.push_back(r.user());
    const std::string wait =
        r.waits() == 0 ? "-" : FormatDurationSeconds(static_cast<uint64_t>(r.mean_wait_s() + 0.5));
    for (const auto& cell : {r.pool(), Fixed(r.core_hours(), 3), Fixed(r.ksps_hours(), 3),
                             std::to_string(r.jobs()), wait}) {
      row.push_back(cell);
    }
    rows.push_back(std::move(row));
  }
  out << FormatTable(rows);
  std::vector<std::vector<std::string>> pools = {{"POOL", "CORES", "CORE_HOURS", "UTILIZATION"}};
  for (const auto& p : report.pools()) {
    pools.push_back({p.pool(), std::to_string(p.cores()), Fixed(p.core_hours(), 3),
                     p.cores() == 0 ? "-" : Fixed(100 * p.utilization(), 1) + "%"});
  }
  out << "\n" << FormatTable(pools);
  out << "(utilization: the core-hours used against the pool's cores now, over the period)\n";
  return out.str();
}

namespace {

// --job ID: a job's number (an array's: every element's); 0 when not given.
Result<uint64_t> JobOption(const CliOptions& o) {
  auto it = o.settings.find("job");
  if (it == o.settings.end()) return uint64_t{0};
  uint64_t id = 0;
  auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), id);
  if (ec != std::errc() || p != it->second.data() + it->second.size() || id == 0) {
    return InvalidArgument("--job is '" + it->second +
                           "'; give a job's number (an array's for all its elements)");
  }
  return id;
}

}  // namespace

int Usage(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 1) {
    return Fail(err, InvalidArgument("usage: snnctl usage [--user U] [--pool P] [--state S] "
                                     "[--job ID] [--since T] [--until T] [--all-tenants] "
                                     "[-o json|--csv]"));
  }
  const int64_t now = SystemClock().NowMs();
  v1::UsageRequest req;
  req.set_tenant(o.tenant);
  req.set_all_tenants(o.all_tenants);
  req.set_user(o.job_user);
  if (auto pool = o.settings.find("pool"); pool != o.settings.end()) req.set_pool(pool->second);
  if (o.states.size() > 1) {
    return Fail(err, InvalidArgument("usage: give one --state (EXITED, KILLED, TIMED_OUT, LOST, "
                                     "LAUNCH_FAILED or RUNNING)"));
  }
  if (!o.states.empty()) req.set_state(o.states[0]);
  auto job = JobOption(o);
  if (!job.ok()) return Fail(err, job.status());
  req.set_job(*job);
  auto since = ParseTimeArg(o.since, now);
  if (!since.ok()) return Fail(err, since.status());
  req.set_from_ms(*since);
  if (!o.until.empty()) {
    auto until = ParseTimeArg(o.until, now);
    if (!until.ok()) return Fail(err, until.status());
    req.set_to_ms(*until);
  }
  auto resp = Call(o, rpc::kBillingUsage, req);
  if (!resp.ok()) return Fail(err, resp.status());
  if (o.output == "json") {
    out << FormatJson(*resp) << "\n";
  } else {
    out << FormatUsage(*resp, o.output == "csv");
  }
  if (resp->truncated()) {
    err << "snnctl: only the first " << resp->records_size()
        << " task attempts are shown; narrow the window (--since, --until) or the filters\n";
  }
  return 0;
}

int Report(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 1) {
    return Fail(err, InvalidArgument("usage: snnctl report [--from T] [--to T] [--by-user] "
                                     "[--job ID] [--all-tenants] [-o json]"));
  }
  auto job = JobOption(o);
  if (!job.ok()) return Fail(err, job.status());
  const int64_t now = SystemClock().NowMs();
  auto period =
      ParsePeriod(o.from, o.to, now, Period{MonthStartUtc(now, false), MonthStartUtc(now, true)});
  if (!period.ok()) return Fail(err, period.status());
  v1::ReportRequest req;
  req.set_tenant(o.tenant);
  req.set_all_tenants(o.all_tenants);
  req.set_from_ms(period->from_ms);
  req.set_to_ms(period->to_ms);
  req.set_by_user(o.by_user);
  req.set_job(*job);
  auto resp = Call(o, rpc::kBillingReport, req);
  if (!resp.ok()) return Fail(err, resp.status());
  out << (o.output == "json" ? FormatJson(*resp) + "\n" : FormatReport(*resp, o.by_user));
  return 0;
}

}  // namespace snn
