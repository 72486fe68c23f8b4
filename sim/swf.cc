#include "sim/swf.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace snn {
namespace {

Status ParseLine(const std::string& line, size_t number, Trace& trace) {
  std::istringstream in(line);
  int64_t f[18];
  for (int i = 0; i < 18; ++i) {
    if (!(in >> f[i])) {
      return InvalidArgument("line " + std::to_string(number) +
                             ": expected 18 integer fields, found " + std::to_string(i));
    }
  }
  std::string extra;
  if (in >> extra) {
    return InvalidArgument("line " + std::to_string(number) + ": more than 18 fields ('" + extra +
                           "')");
  }
  const int64_t run = f[3], allocated = f[4], requested = f[7], estimate = f[8];
  int64_t procs = allocated > 0 ? allocated : requested;
  if (run < 0 || procs <= 0) {
    ++trace.dropped;
    return Status::Ok();
  }
  if (trace.max_procs > 0) procs = std::min<int64_t>(procs, trace.max_procs);
  TraceJob job;
  job.id = static_cast<uint64_t>(f[0]);
  job.submit_s = f[1];
  job.run_s = run;
  job.estimate_s = std::max(estimate > 0 ? estimate : run, run);
  job.procs = static_cast<uint32_t>(procs);
  job.user = f[11];
  trace.jobs.push_back(job);
  return Status::Ok();
}

Result<Trace> ParseLines(const std::vector<std::string>& lines, bool skip_bad_lines) {
  Trace trace;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos) continue;
    if (line[start] == ';') {
      unsigned procs = 0;
      if (sscanf(line.c_str() + start, "; MaxProcs: %u", &procs) == 1) trace.max_procs = procs;
      continue;
    }
    Status s = ParseLine(line, i + 1, trace);
    if (!s.ok()) {
      if (!skip_bad_lines) return s;
      ++trace.bad_lines;
    }
  }
  if (trace.max_procs == 0) {
    for (const auto& j : trace.jobs) trace.max_procs = std::max(trace.max_procs, j.procs);
  }
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
  return trace;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

Result<Trace> ParseSwf(const std::string& text, bool skip_bad_lines) {
  return ParseLines(SplitLines(text), skip_bad_lines);
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
