#include "master/store/journal.h"

#include <glog/logging.h>

#include <cstdio>
#include <memory>

namespace snn {

std::string Hex16(uint64_t value) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string JobKey(uint64_t job_id) { return kJobKeyPrefix + Hex16(job_id); }
std::string ArchiveKey(uint64_t job_id) { return kArchiveKeyPrefix + Hex16(job_id); }
std::string ArchiveSummaryKey(uint64_t job_id) { return kArchiveSummaryPrefix + Hex16(job_id); }
std::string ArchiveTenantKey(const std::string& tenant, uint64_t tenant_job_id) {
  return kArchiveTenantPrefix + tenant + "/" + Hex16(tenant_job_id);
}

std::string NodeKey(const std::string& name) { return kNodeKeyPrefix + name; }

void Journal::PutJob(const v1::JobRecord& job) {
  batch_.push_back(StoreWrite{JobKey(job.id()), job.SerializeAsString()});
}

void Journal::ArchiveJob(const v1::JobRecord& job, const v1::ArchivedJob& summary,
                         const v1::ArchiveStats& stats) {
  batch_.push_back(StoreWrite{ArchiveKey(job.id()), job.SerializeAsString()});
  batch_.push_back(StoreWrite{ArchiveSummaryKey(job.id()), summary.SerializeAsString()});
  batch_.push_back(
      StoreWrite{ArchiveTenantKey(job.tenant(), job.tenant_job_id()), Hex16(job.id())});
  batch_.push_back(StoreWrite{JobKey(job.id()), std::nullopt});
  archive_stats_ = &stats;
}

void Journal::PutNode(const v1::NodeRecord& node) {
  batch_.push_back(StoreWrite{NodeKey(node.name()), node.SerializeAsString()});
}

void Journal::Put(std::string key, std::string value) {
  batch_.push_back(StoreWrite{std::move(key), std::move(value)});
}

void Journal::PutPolicy(const v1::SchedulingConfig& config) {
  batch_.push_back(StoreWrite{kPolicyKey, config.SerializeAsString()});
}

void Journal::PutToken(const std::string& hash, const v1::JoinTokenRecord& token) {
  batch_.push_back(StoreWrite{kTokenKeyPrefix + hash, token.SerializeAsString()});
}

void Journal::PutApproval(const v1::NodeApproval& approval) {
  batch_.push_back(StoreWrite{kApprovalKeyPrefix + approval.node(), approval.SerializeAsString()});
}

void Journal::Delete(std::string key) {
  batch_.push_back(StoreWrite{std::move(key), std::nullopt});
}

void Journal::DeleteToken(const std::string& hash) {
  batch_.push_back(StoreWrite{kTokenKeyPrefix + hash, std::nullopt});
}

void Journal::PutAccessToken(const std::string& hash, const v1::AccessTokenRecord& token) {
  batch_.push_back(StoreWrite{kAccessTokenKeyPrefix + hash, token.SerializeAsString()});
}

void Journal::DeleteAccessToken(const std::string& hash) {
  batch_.push_back(StoreWrite{kAccessTokenKeyPrefix + hash, std::nullopt});
}

void Journal::Defer(std::function<void()> effect) { effects_.push_back(std::move(effect)); }

void Journal::Commit(std::function<void()> done) {
  ++commits_;
  auto effects = std::make_shared<std::vector<std::function<void()>>>(std::move(effects_));
  effects_.clear();
  if (done) effects->push_back(std::move(done));
  if (archive_stats_ != nullptr) {
    batch_.push_back(StoreWrite{kArchiveStatsKey, archive_stats_->SerializeAsString()});
    archive_stats_ = nullptr;
  }
  StoreBatch batch = std::move(batch_);
  batch_.clear();
  if (on_commit_ && !batch.empty()) on_commit_(batch.size());
  store_.Commit(std::move(batch), [post = post_, effects](Status status) {
    // A write the master cannot make durable leaves it unable to keep its promises: stop, so
    // that a restart recovers from the last durable state and nothing unsynced is acknowledged.
    if (!status.ok()) LOG(FATAL) << "cannot persist state: " << status.ToString();
    if (effects->empty()) return;
    post([effects] {
      for (auto& effect : *effects) effect();
    });
  });
}

}  // namespace snn
