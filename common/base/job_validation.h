// The limits every job spec must respect, checked by snnctl before sending and by the master
// again on receipt (the master never trusts a client). Pure, thread-safe.
#pragma once

#include <cstdint>

#include "common/base/rect_allocator.h"
#include "common/base/status.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"

namespace snn {

struct JobLimits {
  static constexpr uint32_t kMaxCores = 256 * 256;
  static constexpr uint32_t kMaxKsps = 100'000'000;
  static constexpr uint32_t kMaxStreams = 4096;
  static constexpr uint32_t kMaxReplicas = 4096;
  static constexpr int32_t kMaxPriority = 1'000'000;
  static constexpr uint64_t kMaxTimeLimitS = 365ull * 86400;
  static constexpr uint32_t kMaxKeepaliveS = 86400;  // a session's renewal period
  static constexpr size_t kMaxNameBytes = 256;
  static constexpr size_t kMaxArgs = 4096;
  static constexpr size_t kMaxEnv = 1024;
  // The whole job description (command, args, env): far below a frame, so that any page of
  // jobs fits in an answer whatever a tenant put in its jobs.
  static constexpr size_t kMaxSpecBytes = 512 << 10;
  // A model's network travels in the job (snnctl reads it, the agent never opens user paths).
  // Listings leave it out; one job with it still fits a frame.
  static constexpr size_t kMaxNetworkBytes = 1 << 20;
  static constexpr double kMaxUnits = 1e6;                     // normalized throughput units
  static constexpr uint64_t kMaxMemoryMb = uint64_t{1} << 24;  // 16 TiB
  static constexpr uint32_t kMaxProcesses = 1 << 22;
  // task.files: kept in the job's record and sent with each launch, so small (a script and its
  // inputs; larger data belongs on a shared file system).
  static constexpr size_t kMaxFiles = 64;
  static constexpr size_t kMaxFilesBytes = 256 << 10;
  static constexpr size_t kMaxFileNameBytes = 128;
};

// Checks ranges and required fields; the message names the field and the allowed range.
Status ValidateJobSpec(const v1::JobSpec& spec);

// The core request a task's resources make: its explicit shape, or its core count.
CoreRequest CoreRequestOf(const v1::Resources& r);

// Whether a job in `state` has ended for good.
bool IsTerminalState(v1::JobState state);

// Whether `board_type` asks for no particular type ("" or "any").
bool AnyBoardType(const std::string& board_type);

// What a board can really carry: its measured throughput where the HAL measured one below the
// configured capacity, else the capacity. Scheduling places by it; pool status shows it.
uint32_t EffectiveKsps(const v1::BoardInfo& board);

// A throughput in units (or KSPS a unit) as people read it: "1.5", "0.25", "2000".
std::string FormatUnits(double units);

}  // namespace snn
