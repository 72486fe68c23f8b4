#include "cli/job_columns.h"

#include <algorithm>
#include <cctype>

#include "cli/format.h"
#include "common/base/duration.h"

namespace snn {
namespace {

std::string Time(int64_t ms) { return ms == 0 ? "-" : FormatTimestamp(ms); }

std::string Nodes(const v1::JobRecord& job) {
  std::string where;
  for (const auto& t : job.tasks()) {
    where += (where.empty() ? "" : ",") + t.node() + "/" + std::to_string(t.board());
  }
  return where.empty() ? "-" : where;
}

std::string Wait(const v1::JobRecord& job, int64_t now_ms) {
  const int64_t until =
      job.start_ms() != 0 ? job.start_ms() : (job.end_ms() != 0 ? job.end_ms() : now_ms);
  return FormatDurationSeconds(until > job.submit_ms() ? (until - job.submit_ms()) / 1000 : 0);
}

constexpr JobColumn kColumns[] = {
    {"id", "JOBID",
     [](const v1::JobRecord& j, int64_t) { return std::to_string(j.tenant_job_id()); }},
    {"globalid", "GLOBALID",
     [](const v1::JobRecord& j, int64_t) { return std::to_string(j.id()); }},
    {"tenant", "TENANT", [](const v1::JobRecord& j, int64_t) { return j.tenant(); }},
    {"name", "NAME", [](const v1::JobRecord& j, int64_t) { return j.spec().name(); }},
    {"user", "USER", [](const v1::JobRecord& j, int64_t) { return j.spec().user(); }},
    {"state", "STATE", [](const v1::JobRecord& j, int64_t) { return StateName(j.state()); }},
    {"reason", "REASON", [](const v1::JobRecord& j, int64_t) { return j.reason(); }},
    {"pool", "POOL", [](const v1::JobRecord& j, int64_t) { return j.spec().pool(); }},
    {"queue", "QUEUE", [](const v1::JobRecord& j, int64_t) { return j.spec().queue(); }},
    {"priority", "PRIORITY",
     [](const v1::JobRecord& j, int64_t) { return std::to_string(j.spec().priority()); }},
    {"tasks", "TASKS",
     [](const v1::JobRecord& j, int64_t) { return std::to_string(j.spec().min_replicas()); }},
    {"cores", "CORES",
     [](const v1::JobRecord& j, int64_t) {
       return std::to_string(j.spec().task().resources().cores());
     }},
    {"ksps", "KSPS",
     [](const v1::JobRecord& j, int64_t) {
       return std::to_string(j.spec().task().resources().ksps());
     }},
    {"submit", "SUBMIT", [](const v1::JobRecord& j, int64_t) { return Time(j.submit_ms()); }},
    {"start", "START", [](const v1::JobRecord& j, int64_t) { return Time(j.start_ms()); }},
    {"end", "END", [](const v1::JobRecord& j, int64_t) { return Time(j.end_ms()); }},
    {"time", "TIME", [](const v1::JobRecord& j, int64_t now) { return Elapsed(j, now); }},
    {"wait", "WAIT", [](const v1::JobRecord& j, int64_t now) { return Wait(j, now); }},
    {"timelimit", "TIMELIMIT",
     [](const v1::JobRecord& j, int64_t) {
       return FormatDurationSeconds(j.spec().time_limit_s());
     }},
    {"attempt", "TRY", [](const v1::JobRecord& j, int64_t) { return std::to_string(j.attempt()); }},
    {"requeues", "REQUEUES",
     [](const v1::JobRecord& j, int64_t) { return std::to_string(j.requeue_count()); }},
    {"nodes", "NODES", [](const v1::JobRecord& j, int64_t) { return Nodes(j); }},
    {"exit", "EXIT",
     [](const v1::JobRecord& j, int64_t) {
       return j.end_ms() == 0 ? std::string("-") : std::to_string(j.exit_code());
     }},
};

}  // namespace

std::string JobColumnNames() {
  std::string names;
  for (const auto& c : kColumns) names += (names.empty() ? "" : ",") + std::string(c.name);
  return names;
}

Result<std::vector<const JobColumn*>> ParseJobColumns(const std::string& list) {
  std::vector<const JobColumn*> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, end - start);
    name.erase(std::remove_if(name.begin(), name.end(), ::isspace), name.end());
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    start = end + 1;
    if (name.empty()) continue;
    const JobColumn* found = nullptr;
    for (const auto& c : kColumns) {
      if (name == c.name) found = &c;
    }
    if (found == nullptr) {
      return InvalidArgument("--format: no column '" + name + "'; the columns are " +
                             JobColumnNames());
    }
    out.push_back(found);
  }
  if (out.empty())
    return InvalidArgument("--format names no column; the columns are " + JobColumnNames());
  return out;
}

std::string FormatJobColumns(const v1::ListJobsResponse& jobs,
                             const std::vector<const JobColumn*>& columns, int64_t now_ms) {
  std::vector<std::vector<std::string>> rows(1);
  for (const JobColumn* c : columns) rows[0].push_back(c->header);
  for (const auto& job : jobs.jobs()) {
    std::vector<std::string> row;
    for (const JobColumn* c : columns) row.push_back(c->value(job, now_ms));
    rows.push_back(std::move(row));
  }
  return FormatTable(rows);
}

}  // namespace snn
