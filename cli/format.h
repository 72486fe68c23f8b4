// How snnctl prints: aligned tables, `show` pages, and JSON. Pure functions; thread-safe.
#pragma once

#include <google/protobuf/message.h>

#include <cstdint>
#include <string>
#include <vector>

#include "proto/job.pb.h"
#include "proto/node.pb.h"

namespace snn {

// Columns padded to their widest cell; the first row is the header.
std::string FormatTable(const std::vector<std::vector<std::string>>& rows);

std::string FormatJobsTable(const v1::ListJobsResponse& jobs, bool show_tenant, int64_t now_ms);
// Pending jobs in the order the scheduler considers them, with their priority factors.
std::string FormatPriorityTable(const v1::ListJobsResponse& jobs);
// Pending jobs by forecast start (snnctl jobs --start): those with none last.
std::string FormatStartTable(const v1::ListJobsResponse& jobs, int64_t now_ms);
// "2026-11-27 06:10:00 (in 1h 5m; plan)", or why there is none.
std::string FormatForecast(const v1::JobRecord& job, int64_t now_ms);
// `gang`: a running gang's replica pairs and how close they are (ShowJobResponse.gang_links).
std::string FormatJobDetail(const v1::JobRecord& job, int64_t now_ms,
                            const std::vector<std::string>* gang = nullptr);
// Logical -> physical cores with their relay paths, at most `max_rows` of them.
std::string FormatCoreMap(const v1::TaskMapping& mapping, int max_rows);
std::string FormatPoolStatus(const v1::PoolStatusResponse& pool);
std::string FormatJson(const google::protobuf::Message& message);

std::string FormatTimestamp(int64_t ms);
// How long a job ran (or has been running at `now_ms`), H:MM:SS.
std::string Elapsed(const v1::JobRecord& job, int64_t now_ms);
std::string StateName(v1::JobState state);

}  // namespace snn
