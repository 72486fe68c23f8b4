#include "master/jobs/job_archive.h"

#include <algorithm>
#include <cstdlib>

#include "master/jobs/job_arrays.h"

namespace snn {

bool JobFilter::Matches(const std::string& job_tenant, const std::string& job_user,
                        v1::JobState state, int64_t submit_ms, int64_t end_ms) const {
  if (!tenant.empty() && job_tenant != tenant) return false;
  if (!user.empty() && job_user != user) return false;
  if (!states.empty() && std::find(states.begin(), states.end(), state) == states.end()) {
    return false;
  }
  if (until_ms != 0 && submit_ms >= until_ms) return false;
  // end_ms is 0 until the job ends (a requeued job's earlier end is not its end).
  const bool ended = state != v1::PENDING && state != v1::RUNNING && end_ms != 0;
  if (since_ms != 0 && ended && end_ms < since_ms) return false;
  return true;
}

bool JobFilter::Matches(const v1::JobRecord& job) const {
  return Matches(job.tenant(), job.spec().user(), job.state(), job.submit_ms(), job.end_ms());
}

Status JobArchive::Load() {
  auto stored = store_.Get(kArchiveStatsKey);
  if (!stored.ok()) return stored.status();
  if (*stored && !stats_.ParseFromString(**stored)) return Internal("corrupt archive totals");
  return Status::Ok();
}

void JobArchive::Add(const v1::JobRecord& job, Journal& journal) {
  v1::ArchiveStats::StateCount* count = nullptr;
  for (auto& c : *stats_.mutable_counts()) {
    if (c.state() == job.state()) count = &c;
  }
  if (count == nullptr) {
    count = stats_.add_counts();
    count->set_state(job.state());
  }
  count->set_count(count->count() + 1);
  stats_.set_max_job_id(std::max(stats_.max_job_id(), job.id()));
  uint64_t& tenant_max = (*stats_.mutable_max_tenant_job_id())[job.tenant()];
  tenant_max = std::max(tenant_max, LastTenantJobId(job));
  v1::ArchivedJob summary;
  summary.set_id(job.id());
  summary.set_tenant(job.tenant());
  summary.set_tenant_job_id(job.tenant_job_id());
  summary.set_user(job.spec().user());
  summary.set_state(job.state());
  summary.set_submit_ms(job.submit_ms());
  summary.set_end_ms(job.end_ms());
  journal.ArchiveJob(job, summary, stats_);
}

Result<std::optional<v1::JobRecord>> JobArchive::Find(uint64_t job_id) {
  auto stored = store_.Get(ArchiveKey(job_id));
  if (!stored.ok()) return stored.status();
  if (!*stored) return std::optional<v1::JobRecord>();
  v1::JobRecord job;
  if (!job.ParseFromString(**stored)) {
    return Internal("corrupt archived job record " + ArchiveKey(job_id));
  }
  return std::optional<v1::JobRecord>(std::move(job));
}

Result<std::optional<v1::JobRecord>> JobArchive::FindByTenant(const std::string& tenant,
                                                              uint64_t tenant_job_id) {
  auto stored = store_.Get(ArchiveTenantKey(tenant, tenant_job_id));
  if (!stored.ok()) return stored.status();
  if (!*stored) return std::optional<v1::JobRecord>();
  return Find(std::strtoull((*stored)->c_str(), nullptr, 16));
}

Result<JobArchive::Page> JobArchive::Scan(uint64_t after_id, const JobFilter& filter, size_t limit,
                                          size_t budget) {
  Page page;
  if (after_id == UINT64_MAX) return page;
  size_t looked = 0;
  Status corrupt;
  uint64_t last = 0;
  bool ended_early = false;
  v1::ArchivedJob summary;
  Status s =
      store_.Scan(kArchiveSummaryPrefix, ArchiveSummaryKey(after_id + 1),
                  [&](std::string_view key, std::string_view value) {
                    if (page.ids.size() >= limit || looked >= budget) {
                      ended_early = true;
                      return false;
                    }
                    ++looked;
                    if (!summary.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
                      corrupt = Internal("corrupt archive summary " + std::string(key));
                      return false;
                    }
                    last = summary.id();
                    if (filter.Matches(summary.tenant(), summary.user(), summary.state(),
                                       summary.submit_ms(), summary.end_ms())) {
                      page.ids.push_back(summary.id());
                    }
                    return true;
                  });
  if (!s.ok()) return s;
  if (!corrupt.ok()) return corrupt;
  if (ended_early) page.stopped_at = last;
  return page;
}

uint64_t JobArchive::Count(v1::JobState state) const {
  for (const auto& c : stats_.counts()) {
    if (c.state() == state) return c.count();
  }
  return 0;
}

}  // namespace snn
