// How many jobs each user and each tenant has pending or running: what the policy's
// max_submitted limits. A session's steps do not count (they run inside the session); an array
// counts as its elements not started yet (each started element counts as the job it is).
// Kept by JobTable as jobs enter and leave those states. Thread contract: only on the master's
// io thread. Pure data.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>

#include "proto/job.pb.h"

namespace snn {

class SubmittedCounts {
 public:
  // `job` entered (sign > 0) or left (sign < 0) the state it is in now.
  void Count(const v1::JobRecord& job, int sign);
  // A pending array's indices changed: it counts as what it has left.
  void ArrayChanged(const v1::JobRecord& array);

  uint64_t OfUser(const std::string& user) const { return Lookup(users_, user); }
  uint64_t OfTenant(const std::string& tenant) const { return Lookup(tenants_, tenant); }

 private:
  using Counts = std::map<std::string, uint64_t, std::less<>>;
  static uint64_t Lookup(const Counts& counts, const std::string& key);
  static uint64_t Weight(const v1::JobRecord& array);
  void Add(const v1::JobRecord& job, int64_t delta);

  Counts users_, tenants_;
  // The weight each array was counted with: its indices change between entering and leaving.
  std::unordered_map<uint64_t, uint64_t> array_weight_;
};

}  // namespace snn
