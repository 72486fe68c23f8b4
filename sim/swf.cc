#include "sim/swf.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

namespace snn {
namespace {

constexpr int kFields = 18;
constexpr const char* kFieldNames[kFields] = {"job id",
                                              "submit time",
                                              "wait time",
                                              "run time",
                                              "allocated processors",
                                              "avg CPU time",
                                              "used memory",
                                              "requested processors",
                                              "requested time",
                                              "requested memory",
                                              "status",
                                              "user id",
                                              "group id",
                                              "executable",
                                              "queue",
                                              "partition",
                                              "preceding job",
                                              "think time"};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// "; Key: value" (or ";Key: value"): kept by key; other comment lines are notes.
void ReadHeaderLine(std::string_view line, Trace& trace) {
  line = Trim(line.substr(1));
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return;
  const std::string_view key = Trim(line.substr(0, colon));
  if (key.find_first_of(" \t") != std::string_view::npos) return;  // prose, not a field
  const std::string_view value = Trim(line.substr(colon + 1));
  trace.header.try_emplace(std::string(key), std::string(value));
  if (key == "MaxProcs" && !trace.max_procs_in_header) {
    uint32_t procs = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), procs);
    if (ec == std::errc() && procs > 0) {
      trace.max_procs = procs;
      trace.max_procs_in_header = true;
    }
  }
}

// A field the replay uses, as whole seconds or a count: the whole part of what is written.
int64_t Whole(double v) { return static_cast<int64_t>(std::clamp(std::trunc(v), -9.0e15, 9.0e15)); }

Status ReadJobLine(std::string_view line, size_t number, Trace& trace) {
  double f[kFields];
  int count = 0;
  size_t pos = 0;
  while (true) {
    while (pos < line.size() && IsSpace(line[pos])) ++pos;
    if (pos == line.size()) break;
    size_t end = pos;
    while (end < line.size() && !IsSpace(line[end])) ++end;
    const std::string_view token = line.substr(pos, end - pos);
    pos = end;
    if (count == kFields) {
      return InvalidArgument("line " + std::to_string(number) + ": more than " +
                             std::to_string(kFields) + " fields ('" + std::string(token) + "')");
    }
    double v = 0;
    const char* first = token.data();
    if (token.size() > 1 && token[0] == '+') ++first;  // from_chars takes no plus sign
    auto [ptr, ec] = std::from_chars(first, token.data() + token.size(), v);
    if (ec != std::errc() || ptr != token.data() + token.size() || !std::isfinite(v)) {
      return InvalidArgument("line " + std::to_string(number) + ": field " +
                             std::to_string(count + 1) + " (" + kFieldNames[count] + ") is '" +
                             std::string(token) + "', not a number");
    }
    if (token.find('.') != std::string_view::npos) ++trace.decimal_fields;
    f[count++] = v;
  }
  if (count != kFields) {
    return InvalidArgument("line " + std::to_string(number) + ": expected " +
                           std::to_string(kFields) + " fields, found " + std::to_string(count));
  }
  const int64_t run = Whole(f[3]), allocated = Whole(f[4]), requested = Whole(f[7]),
                estimate = Whole(f[8]);
  if (run < 0) {
    ++trace.dropped_run_time;
    return Status::Ok();
  }
  int64_t procs = allocated > 0 ? allocated : requested;
  if (procs <= 0) {
    ++trace.dropped_procs;
    return Status::Ok();
  }
  if (trace.max_procs_in_header && procs > trace.max_procs) {
    procs = trace.max_procs;
    ++trace.capped;
  }
  TraceJob job;
  job.id = static_cast<uint64_t>(std::max<int64_t>(0, Whole(f[0])));
  job.submit_s = Whole(f[1]);
  job.run_s = run;
  job.estimate_s = std::max(estimate > 0 ? estimate : run, run);
  job.procs = static_cast<uint32_t>(std::min<int64_t>(procs, UINT32_MAX));
  job.user = Whole(f[11]);
  trace.jobs.push_back(job);
  return Status::Ok();
}

}  // namespace

Result<Trace> ParseSwf(std::string_view text, bool skip_bad_lines) {
  Trace trace;
  size_t number = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++number;
    line = Trim(line);
    if (line.empty()) continue;
    if (line.front() == ';') {
      ReadHeaderLine(line, trace);
      continue;
    }
    ++trace.job_lines;
    Status s = ReadJobLine(line, number, trace);
    if (!s.ok()) {
      if (!skip_bad_lines) return s;
      if (trace.bad_lines++ == 0) trace.first_bad_line = s.message();
    }
  }
  if (!trace.max_procs_in_header) {
    for (const auto& j : trace.jobs) trace.max_procs = std::max(trace.max_procs, j.procs);
  }
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
  return trace;
}

Result<Trace> ReadSwf(const std::string& path, bool skip_bad_lines) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files too
  if (f == nullptr) return NotFound("cannot open trace " + path);
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  const bool failed = n < 0;
  gzclose(f);
  if (failed) return InvalidArgument(path + ": cannot be decompressed");
  auto trace = ParseSwf(text, skip_bad_lines);
  if (!trace.ok()) return Status(trace.status().code(), path + ": " + trace.status().message());
  return trace;
}

}  // namespace snn
