#include "cli/format.h"

#include <algorithm>
#include <ctime>
#include <map>

#include "common/base/array_spec.h"
#include "common/base/duration.h"
#include "common/base/job_validation.h"
#include "common/base/proto_json.h"

namespace snn {

std::string Elapsed(const v1::JobRecord& job, int64_t now_ms) {
  if (job.start_ms() == 0) return "0:00:00";
  const int64_t end = job.end_ms() != 0 ? job.end_ms() : now_ms;
  return FormatDurationSeconds(end > job.start_ms() ? (end - job.start_ms()) / 1000 : 0);
}

namespace {

// An array's progress ("; 1000 elements: 37 started (30 completed, 1 failed, 0 cancelled), 5
// held"), or an element's array.
std::string ArrayWords(const v1::JobRecord& job) {
  if (job.array_parent() != 0)
    return JobName(job) + " (element of array " + std::to_string(job.array_job_id()) + ")";
  const v1::ArraySpec& a = job.spec().array();
  std::string s = FormatArrayRanges(a.ranges()) +
                  (a.max_running() > 0 ? "%" + std::to_string(a.max_running()) : "") + "; " +
                  std::to_string(CountOf(a.ranges())) +
                  " elements: " + std::to_string(job.array_started()) + " started (" +
                  std::to_string(job.array_completed()) + " completed, " +
                  std::to_string(job.array_failed()) + " failed, " +
                  std::to_string(job.array_cancelled()) + " cancelled)";
  if (job.array_held_size() > 0) s += ", held " + FormatArrayRanges(job.array_held());
  return s;
}

std::string TaskStateName(v1::TaskState state) {
  std::string name = v1::TaskState_Name(state);
  return name.rfind("TASK_", 0) == 0 ? name.substr(5) : name;
}

std::string Route(const google::protobuf::RepeatedPtrField<v1::CoreXY>& points) {
  if (points.empty()) return "none (cut off by dead cores)";
  std::string s;
  for (const auto& p : points) {
    s += (s.empty() ? "" : " > ") + std::to_string(p.x()) + "," + std::to_string(p.y());
  }
  return s;
}

}  // namespace

std::string FormatCoreMap(const v1::TaskMapping& m, int max_rows) {
  std::string out =
      "    logical -> physical   config path (from the I/O port)   spike path (to it)\n";
  for (int i = 0; i < m.cores_size(); ++i) {
    if (i == max_rows) {
      out += "    ... " + std::to_string(m.cores_size() - max_rows) + " more in the mapping file\n";
      break;
    }
    const std::string phys =
        "(" + std::to_string(m.cores(i).x()) + "," + std::to_string(m.cores(i).y()) + ")";
    std::string line = "    " + std::to_string(i) + " -> " + phys;
    line += std::string(line.size() < 26 ? 26 - line.size() : 1, ' ');
    if (i < m.paths_size()) {
      const std::string config = Route(m.paths(i).config());
      line += config + std::string(config.size() < 34 ? 34 - config.size() : 1, ' ') +
              Route(m.paths(i).spike());
    }
    out += line + "\n";
  }
  return out;
}

std::string StateName(v1::JobState state) { return v1::JobState_Name(state); }

std::string FormatTimestamp(int64_t ms) {
  if (ms == 0) return "-";
  const time_t t = static_cast<time_t>(ms / 1000);
  struct tm tm {};
  localtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string FormatTable(const std::vector<std::vector<std::string>>& given) {
  // Whatever a job or a node is named, a cell is one line and sends the terminal no codes.
  std::vector<std::vector<std::string>> rows = given;
  for (auto& row : rows) {
    for (auto& cell : row) {
      for (char& c : cell) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
      }
    }
  }
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string FormatJobsTable(const v1::ListJobsResponse& jobs, bool show_tenant, int64_t now_ms) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"JOBID"};
  if (show_tenant) header.push_back("TENANT");
  for (const char* h : {"NAME", "USER", "STATE", "POOL", "TASKS", "TIME", "NODES/REASON"}) {
    header.push_back(h);
  }
  rows.push_back(header);
  for (const auto& job : jobs.jobs()) {
    std::vector<std::string> row = {JobName(job)};
    if (show_tenant) row.push_back(job.tenant());
    std::string where;
    if (job.state() == v1::RUNNING) {
      for (const auto& t : job.tasks()) {
        where += (where.empty() ? "" : ",") + t.node() + "/" + std::to_string(t.board());
      }
    } else {
      where = job.reason();
    }
    row.insert(row.end(),
               {job.spec().name(), job.spec().user(), StateName(job.state()), job.spec().pool(),
                std::to_string(job.spec().min_replicas()), Elapsed(job, now_ms), where});
    rows.push_back(std::move(row));
  }
  return FormatTable(rows);
}

std::string FormatPriorityTable(const v1::ListJobsResponse& jobs) {
  std::vector<const v1::JobRecord*> pending;
  for (const auto& j : jobs.jobs()) pending.push_back(&j);
  std::stable_sort(pending.begin(), pending.end(),
                   [](const v1::JobRecord* a, const v1::JobRecord* b) {
                     if (a->priority().starving() != b->priority().starving())
                       return a->priority().starving();
                     return a->priority().total() > b->priority().total();
                   });
  auto f = [](double v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.3f", v);
    return std::string(buf);
  };
  std::vector<std::vector<std::string>> rows = {{"JOBID", "TENANT", "NAME", "QUEUE", "PRIORITY",
                                                 "AGE", "FAIRSHARE", "SIZE", "QUEUE_F", "JOB",
                                                 "SLOWDOWN", "NOTE"}};
  for (const v1::JobRecord* j : pending) {
    const auto& p = j->priority();
    char total[32];
    snprintf(total, sizeof total, "%.1f", p.total());
    rows.push_back({JobName(*j), j->tenant(), j->spec().name(), j->spec().queue(), total,
                    f(p.age()), f(p.fairshare()), f(p.size()), f(p.queue()), f(p.job()),
                    f(p.slowdown()), p.starving() ? "starving: goes first" : ""});
  }
  return FormatTable(rows) +
         "(factors 0..1 as of the last scheduling pass; queues of a higher priority tier go "
         "first)\n";
}

std::string FormatForecast(const v1::JobRecord& job, int64_t now_ms) {
  const std::string& basis = job.forecast_basis();
  if (job.forecast_start_ms() == 0) {
    if (basis == "held") return "none: held";
    if (basis == "limit") {
      return "none: a core-hour limit holds it back (it starts as used core-time leaves the "
             "limit's window)";
    }
    if (basis == "beyond") return "none: further back than the first 1000 pending jobs";
    return "none: the plan never starts it as the boards are now";
  }
  const int64_t in_s = std::max<int64_t>(0, (job.forecast_start_ms() - now_ms + 999) / 1000);
  return FormatTimestamp(job.forecast_start_ms()) + " (" +
         (in_s == 0 ? std::string("now") : "in " + FormatDurationSeconds(in_s)) + "; " + basis +
         ")";
}

std::string FormatStartTable(const v1::ListJobsResponse& jobs, int64_t now_ms) {
  std::vector<const v1::JobRecord*> pending;
  for (const auto& j : jobs.jobs()) pending.push_back(&j);
  std::stable_sort(pending.begin(), pending.end(),
                   [](const v1::JobRecord* a, const v1::JobRecord* b) {
                     const int64_t x = a->forecast_start_ms(), y = b->forecast_start_ms();
                     if ((x == 0) != (y == 0)) return y == 0;
                     return x < y;
                   });
  std::vector<std::vector<std::string>> rows = {
      {"JOBID", "TENANT", "NAME", "USER", "POOL", "START", "IN", "BASIS"}};
  for (const v1::JobRecord* j : pending) {
    const int64_t start = j->forecast_start_ms();
    const int64_t in_s = std::max<int64_t>(0, (start - now_ms + 999) / 1000);
    rows.push_back({JobName(*j), j->tenant(), j->spec().name(), j->spec().user(), j->spec().pool(),
                    start == 0 ? "-" : FormatTimestamp(start),
                    start == 0 ? "-" : (in_s == 0 ? "now" : FormatDurationSeconds(in_s)),
                    j->forecast_basis().empty() ? "-" : j->forecast_basis()});
  }
  return FormatTable(rows) +
         "(the scheduler's plan carried forward: each job runs as long as its user's last two "
         "batch jobs did, at most its time limit; jobs submitted later, failures and preemption "
         "can change it)\n";
}

// "injected 8, delivered 24, ..., rate 0.0 KSPS", or "" when nothing was counted.
std::string FormatSpikeUsage(const v1::SpikeUsage& u) {
  if (u.ByteSizeLong() == 0) return "";
  char rate[32];
  snprintf(rate, sizeof rate, "%.1f", u.rate_ksps());
  return "injected " + std::to_string(u.injected()) + ", delivered " +
         std::to_string(u.delivered()) + ", delayed " + std::to_string(u.delayed()) + ", dropped " +
         std::to_string(u.dropped()) + ", throttled " + std::to_string(u.throttled()) +
         ", refused " + std::to_string(u.refused()) + ", outputs " + std::to_string(u.outputs()) +
         "; rate " + rate + " KSPS";
}

namespace {

// "after_ok 3,4; after_corr 7; singleton": what the job was submitted to wait for.
std::string DependsWords(const v1::JobSpec& spec) {
  std::string out;
  auto kind = [&out](const char* name, const auto& ids) {
    if (ids.empty()) return;
    std::string list;
    for (uint64_t id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
    out += (out.empty() ? "" : "; ") + std::string(name) + " " + list;
  };
  kind("after_ok", spec.after_ok());
  kind("after_any", spec.after_any());
  kind("after_not_ok", spec.after_not_ok());
  kind("after_corr", spec.after_corr());
  if (spec.singleton()) out += out.empty() ? "singleton" : "; singleton";
  return out;
}

// The job's tasks, each with where it runs, its rectangle and core map, its spikes and output.
std::string TaskLines(const v1::JobRecord& job) {
  std::string out;
  if (job.tasks_size() > 0) {
    out += "Tasks:\n";
    for (const auto& t : job.tasks()) {
      out += "  task " + std::to_string(t.index()) + " on " + t.node() + "/board" +
             std::to_string(t.board()) + "  " + TaskStateName(t.state());
      if (t.pid() != 0) out += "  pid " + std::to_string(t.pid());
      if (t.state() == v1::TASK_EXITED) {
        out += t.term_signal() ? "  signal " + std::to_string(t.term_signal())
                               : "  exit " + std::to_string(t.exit_code());
      }
      if (!t.detail().empty()) out += "  (" + t.detail() + ")";
      out += "\n";
      if (t.mapping().cores_size() > 0) {
        const auto& m = t.mapping();
        std::string channels;
        for (uint32_t c : m.router_channels()) {
          channels += (channels.empty() ? "" : ",") + std::to_string(c);
        }
        out += "    rectangle " + std::to_string(m.rect().width()) + "x" +
               std::to_string(m.rect().height()) + " at (" + std::to_string(m.rect().x()) + "," +
               std::to_string(m.rect().y()) + ")  channels " + channels + "  input queue " +
               std::to_string(m.pulse_input_queue()) + "\n";
        out += FormatCoreMap(m, /*max_rows=*/8);
        if (!m.mapping_file().empty()) out += "    mapping file " + m.mapping_file() + "\n";
      } else if (t.mapping().rect().width() > 0) {
        const auto& r = t.mapping().rect();
        out += "    rectangle " + std::to_string(r.width()) + "x" + std::to_string(r.height()) +
               " at (" + std::to_string(r.x()) + "," + std::to_string(r.y()) +
               ") chosen by the master\n";
      }
      if (const std::string u = FormatSpikeUsage(t.usage()); !u.empty()) {
        out += "    spikes " + u + "\n";
      }
      if (!t.stdout_path().empty()) {
        out += "    stdout " + t.stdout_path() + "\n    stderr " + t.stderr_path() + "\n";
      }
    }
  }
  return out;
}

}  // namespace

std::string FormatJobDetail(const v1::JobRecord& job, int64_t now_ms,
                            const std::vector<std::string>* gang) {
  const auto& spec = job.spec();
  const auto& r = spec.task().resources();
  std::string out;
  auto line = [&out](const std::string& key, const std::string& value) {
    out += key + std::string(key.size() < 13 ? 13 - key.size() : 1, ' ') + value + "\n";
  };
  line("JobId:", std::to_string(job.tenant_job_id()) + " (tenant " + job.tenant() + ", global id " +
                     std::to_string(job.id()) + ")");
  if (job.array_parent() != 0 || spec.has_array()) line("Array:", ArrayWords(job));
  if (!job.array_note().empty()) line("Elements:", job.array_note());
  if (!spec.schedule().empty()) {
    line("Schedule:", spec.schedule() + " (UTC); " +
                          (job.next_run_ms() > 0 && job.state() == v1::PENDING
                               ? "next run " + FormatTimestamp(job.next_run_ms()) + "; "
                               : std::string()) +
                          std::to_string(job.runs()) + " runs" +
                          (job.last_run() != 0 ? ", the last job " + std::to_string(job.last_run())
                                               : std::string()) +
                          ", " + std::to_string(job.runs_skipped()) +
                          " skipped (the last run still live, or held)");
  }
  if (job.recurring_job_id() != 0) {
    line("Recurring:", "a run of recurring job " + std::to_string(job.recurring_job_id()));
  }
  if (!spec.reservation().empty()) line("Reservation:", spec.reservation());
  if (const std::string depends = DependsWords(spec); !depends.empty()) line("Depends:", depends);
  line("Name:", spec.name());
  line("User:", spec.user());
  line("State:", StateName(job.state()));
  line("Reason:", job.reason());
  if (IsTerminalState(job.state())) line("ExitCode:", std::to_string(job.exit_code()));
  line("Pool:", spec.pool() + "   Queue: " + spec.queue() +
                    "   Priority: " + std::to_string(spec.priority()) +
                    "   Preemptible: " + (spec.preemptible() ? "yes" : "no"));
  line("TimeLimit:", FormatDurationSeconds(spec.time_limit_s()));
  line("Elapsed:", Elapsed(job, now_ms));
  line("Submitted:", FormatTimestamp(job.submit_ms()));
  line("Started:", FormatTimestamp(job.start_ms()));
  line("Ended:", FormatTimestamp(job.end_ms()));
  std::string command = spec.task().command();
  for (const auto& a : spec.task().args()) command += " " + a;
  line("Command:", command);
  const std::string units =
      r.units() > 0 ? " (" + FormatUnits(r.units()) + " units, on measured throughput)" : "";
  line("Resources:", std::to_string(r.cores()) + " cores, " + std::to_string(r.ksps()) + " ksps" +
                         units + ", " + std::to_string(r.streams()) + " streams per task, board " +
                         (AnyBoardType(r.board_type()) ? "any" : r.board_type()));
  if (!r.constraints().empty()) line("Constraints:", r.constraints());
  if (!spec.licenses().empty()) {
    std::string licenses;
    for (const auto& [name, count] :
         std::map<std::string, uint32_t>(spec.licenses().begin(), spec.licenses().end())) {
      licenses += (licenses.empty() ? "" : ", ") + name + " " + std::to_string(count);
    }
    line("Licenses:", licenses);
  }
  line("Replicas:", "min " + std::to_string(spec.min_replicas()) + ", max " +
                        std::to_string(spec.max_replicas()) +
                        (spec.spread().empty() ? "" : ", " + spec.spread()));
  line("Attempts:", std::to_string(job.attempt()) +
                        "   Requeues: " + std::to_string(job.requeue_count()) +
                        "   Preempted: " + std::to_string(job.preempt_count()) +
                        "   Lost: " + std::to_string(job.lost_count()));
  if (job.state() == v1::PENDING && job.expected_start_ms() > 0) {
    line("ExpectedStart:", FormatTimestamp(job.expected_start_ms()) +
                               " (reserved; by the running jobs' time limits)");
  }
  if (job.state() == v1::PENDING && !job.forecast_basis().empty()) {
    line("Forecast:", FormatForecast(job, now_ms));
  }
  const std::string spikes = FormatSpikeUsage(job.usage());
  line("Spikes:", spikes.empty() ? "none counted" : spikes + " (all attempts)");
  out += TaskLines(job);
  if (gang != nullptr && !gang->empty()) {
    out += "Gang:\n";
    for (const auto& l : *gang) out += "  " + l + "\n";
  }
  if (job.checkpoints_size() > 0) {  // kept across attempts, as the directories are
    out += "Checkpoints:\n";
    std::map<uint32_t, v1::Checkpoint> by_task;
    for (const auto& c : job.checkpoints()) by_task[c.task()] = c;
    for (const auto& [index, c] : by_task) {
      out += "  task " + std::to_string(index) + ": " + c.file() + "  written " +
             FormatTimestamp(c.mtime_ms()) + "  " + std::to_string(c.bytes()) + " bytes  in " +
             c.dir() + "\n";
    }
  }
  out += "History:\n";
  for (const auto& h : job.history()) {
    const std::string from =
        h.from() == v1::JOB_STATE_UNSPECIFIED ? "" : StateName(h.from()) + " -> ";
    out += "  " + FormatTimestamp(h.time_ms()) + "  " + from + StateName(h.to()) + "  " +
           h.reason() + "\n";
  }
  return out;
}

namespace {

std::string FormatUnitsCell(double units) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", units);
  return text;
}

// A board's attributes as constraints name them, by name: "firmware=2.10,rev=3" ("-": none).
std::string FormatAttributes(const google::protobuf::Map<std::string, std::string>& attributes) {
  const std::map<std::string, std::string> sorted(attributes.begin(), attributes.end());
  std::string out;
  for (const auto& [name, value] : sorted) out += (out.empty() ? "" : ",") + name + "=" + value;
  return out.empty() ? "-" : out;
}

// Which of them are the master's marks (what `snnctl board unmark` removes): "calibrated,rev".
std::string FormatMarks(const google::protobuf::RepeatedPtrField<std::string>& marked) {
  std::string out;
  for (const auto& name : marked) out += (out.empty() ? "" : ",") + name;
  return out.empty() ? "-" : out;
}

}  // namespace

std::string FormatPoolStatus(const v1::PoolStatusResponse& pool) {
  std::vector<std::vector<std::string>> rows = {
      {"NODE",          "STATE", "POOLS",      "BOARD",      "TYPE",         "MESH",
       "HEALTH",        "DEAD",  "CORES_USED", "CORES_FREE", "LARGEST_FREE", "KSPS_CAP",
       "KSPS_MEASURED", "UNITS", "LATENCY_US", "KSPS_USED",  "KSPS_FREE",    "STREAMS_USED",
       "STREAMS_FREE",  "TASKS", "ATTRIBUTES", "MARKS"}};
  for (const auto& node : pool.nodes()) {
    std::string pools;
    for (const auto& p : node.pools()) pools += (pools.empty() ? "" : ",") + p;
    for (const auto& b : node.boards()) {
      const auto& info = b.info();
      auto free = [](uint32_t total, uint32_t used) {
        return std::to_string(total > used ? total - used : 0);
      };
      rows.push_back({node.name(),
                      (b.state().empty() ? node.state() : b.state()) +
                          (info.power() == "off" ? " (powered off)" : ""),
                      pools,
                      std::to_string(info.index()),
                      info.type(),
                      std::to_string(info.width()) + "x" + std::to_string(info.height()),
                      std::to_string(info.health()),
                      std::to_string(info.dead_cores_size()),
                      std::to_string(b.cores_used()),
                      free(b.cores_total(), b.cores_used()),
                      std::to_string(b.largest_free().width()) + "x" +
                          std::to_string(b.largest_free().height()),
                      std::to_string(info.ksps()),
                      std::to_string(info.measured_ksps()),
                      FormatUnitsCell(b.units()),
                      info.latency_us() ? std::to_string(info.latency_us()) : "-",
                      std::to_string(b.ksps_used()),
                      free(EffectiveKsps(info), b.ksps_used()),
                      std::to_string(b.streams_used()),
                      free(info.streams(), b.streams_used()),
                      std::to_string(b.tasks()),
                      FormatAttributes(info.attributes()),
                      FormatMarks(b.marked())});
    }
  }
  std::string out = pool.nodes_size() == 0 ? "No nodes have registered.\n" : FormatTable(rows);
  if (pool.unit_ksps() > 0) {
    out += "\n1 unit = " + FormatUnits(pool.unit_ksps()) + " measured KSPS" +
           (pool.unit_board_type().empty()
                ? std::string(" (snn-master --unit_ksps)")
                : " (the median of " + pool.unit_board_type() + " boards)") +
           "; UNITS and KSPS_FREE go by what each board measures, not its capacity.";
  }
  out += "\nJobs:";
  for (const auto& c : pool.job_counts()) {
    out += "  " + StateName(c.state()) + " " + std::to_string(c.count());
  }
  return out + "\n";
}

std::string FormatJson(const google::protobuf::Message& message) { return ToJson(message); }

}  // namespace snn
