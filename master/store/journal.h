// Gathers the record writes of one event (a submit, a task report, a scheduling pass) into one
// store batch, and holds back the event's effects (replies, launches, kills) until that batch is
// durable. Nothing the master tells anyone is ahead of what it has synced.
// Thread contract: only on the master's io thread; `post` brings store callbacks back to it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "master/store/store.h"
#include "proto/access.pb.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"
#include "proto/policy.pb.h"

namespace snn {

// Key layout: "job/" + 16 hex digits of the global id; "node/" + node name.
std::string JobKey(uint64_t job_id);
std::string NodeKey(const std::string& name);
inline constexpr char kJobKeyPrefix[] = "job/";
inline constexpr char kNodeKeyPrefix[] = "node/";
inline constexpr char kPolicyKey[] = "policy";
inline constexpr char kTokenKeyPrefix[] = "token/";         // + SHA-256 of a join token, in hex
inline constexpr char kApprovalKeyPrefix[] = "approval/";   // + node name: its NodeApproval
inline constexpr char kAccessTokenKeyPrefix[] = "atoken/";  // + SHA-256 of an access token, in hex
// The archive of finished jobs: "arch/" + 16 hex digits holds the whole record, "archs/" + the
// same its ArchivedJob summary, "archt/" + tenant + "/" + 16 hex digits of the tenant job id
// the global id (16 hex digits), and "archstats" the ArchiveStats.
inline constexpr char kArchiveKeyPrefix[] = "arch/";
inline constexpr char kArchiveSummaryPrefix[] = "archs/";
inline constexpr char kArchiveTenantPrefix[] = "archt/";
inline constexpr char kArchiveStatsKey[] = "archstats";
std::string ArchiveKey(uint64_t job_id);
std::string ArchiveSummaryKey(uint64_t job_id);
std::string ArchiveTenantKey(const std::string& tenant, uint64_t tenant_job_id);
std::string Hex16(uint64_t value);

class Journal {
 public:
  using Post = std::function<void(std::function<void()>)>;
  Journal(Store& store, Post post) : store_(store), post_(std::move(post)) {}

  void PutJob(const v1::JobRecord& job);
  // Moves a finished job from the hot records to the archive; `stats` replaces the archive's
  // totals (written once per batch, however many jobs it archives).
  void ArchiveJob(const v1::JobRecord& job, const v1::ArchivedJob& summary,
                  const v1::ArchiveStats& stats);
  void PutNode(const v1::NodeRecord& node);
  void PutPolicy(const v1::SchedulingConfig& config);
  // Any other record (billing: master/billing_ledger.h names its keys).
  void Put(std::string key, std::string value);
  void Delete(std::string key);
  void PutToken(const std::string& hash, const v1::JoinTokenRecord& token);
  void DeleteToken(const std::string& hash);
  void PutAccessToken(const std::string& hash, const v1::AccessTokenRecord& token);
  void DeleteAccessToken(const std::string& hash);
  void PutApproval(const v1::NodeApproval& approval);
  // Runs `effect` on the io thread once the writes gathered so far are durable.
  void Defer(std::function<void()> effect);

  // Sends the gathered writes as one batch; deferred effects and then `done` run once it (and
  // everything before it) is durable. With nothing gathered it is a read barrier.
  void Commit(std::function<void()> done = nullptr);

  uint64_t commits() const { return commits_; }
  // Hears of each batch sent, with its number of writes.
  void set_on_commit(std::function<void(size_t)> f) { on_commit_ = std::move(f); }

 private:
  Store& store_;
  Post post_;
  std::function<void(size_t)> on_commit_;
  StoreBatch batch_;                                 // only on the io thread
  const v1::ArchiveStats* archive_stats_ = nullptr;  // written at Commit
  std::vector<std::function<void()>> effects_;       // only on the io thread
  uint64_t commits_ = 0;
};

}  // namespace snn
