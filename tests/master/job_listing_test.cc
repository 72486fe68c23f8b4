// `snnctl jobs` pages over hot and archived jobs: every matching job exactly once, in id order,
// however small the pages and however little of the archive each one may look at.
#include "master/jobs/job_listing.h"

#include <gtest/gtest.h>

#include <random>

#include "master/store/memory_store.h"

namespace snn {
namespace {

class JobListingTest : public ::testing::Test {
 protected:
  JobListingTest() : journal_(store_, [](std::function<void()> fn) { fn(); }), archive_(store_) {}

  // Jobs 1..n: some pending or running (hot), the rest ended and archived; one has just ended
  // and is in both places, as a job is until its move is durable.
  void Fill(int n) {
    std::mt19937 rng(7);
    const v1::JobState states[] = {v1::PENDING, v1::RUNNING,   v1::COMPLETED,
                                   v1::FAILED,  v1::CANCELLED, v1::TIMEOUT};
    for (int i = 1; i <= n; ++i) {
      v1::JobRecord job;
      job.set_id(i);
      job.set_tenant(i % 3 == 0 ? "lab-b" : "lab-a");
      job.set_tenant_job_id(i);
      job.mutable_spec()->set_user(i % 4 == 0 ? "bob" : "alice");
      job.set_state(states[rng() % 6]);
      job.set_submit_ms(1000 * i);
      if (IsTerminal(job.state())) job.set_end_ms(1000 * i + 500 * (rng() % 20));
      all_.push_back(job);
      if (!IsTerminal(job.state())) {
        jobs_.Restore(job);
        continue;
      }
      archive_.Add(job, journal_);
      if (i == n / 2) {
        jobs_.Restore(job);
        jobs_.MarkArchived(job);
      }
    }
    journal_.Commit();
  }

  std::vector<uint64_t> Expected(const JobFilter& filter) const {
    std::vector<uint64_t> ids;
    for (const auto& job : all_) {
      if (filter.Matches(job)) ids.push_back(job.id());
    }
    return ids;
  }

  std::vector<uint64_t> ListAll(const JobFilter& filter, size_t limit, size_t budget) {
    std::vector<uint64_t> ids;
    uint64_t after = 0;
    for (int pages = 0; pages < 100000; ++pages) {
      auto end =
          ListJobs(jobs_, archive_, filter, after, limit, budget, [&](const v1::JobRecord& job) {
            ids.push_back(job.id());
            return true;
          });
      EXPECT_TRUE(end.ok());
      if (!end.ok() || !end->more) break;
      EXPECT_GE(end->next_after_id, after) << "pages move forward";
      after = end->next_after_id;
    }
    return ids;
  }

  MemoryStore store_;
  Journal journal_;
  JobTable jobs_;
  JobArchive archive_;
  std::vector<v1::JobRecord> all_;
};

TEST_F(JobListingTest, EveryMatchingJobOnceInIdOrderWhateverThePageAndBudget) {
  Fill(300);
  std::vector<JobFilter> filters(6);
  filters[1].tenant = "lab-a";
  filters[2].user = "bob";
  filters[3].states = {v1::FAILED, v1::PENDING};
  filters[4].since_ms = 150000;
  filters[4].until_ms = 250000;
  filters[5].tenant = "lab-b";
  filters[5].user = "bob";
  filters[5].states = {v1::COMPLETED};
  for (const JobFilter& filter : filters) {
    const auto expected = Expected(filter);
    ASSERT_FALSE(expected.empty());
    for (auto [limit, budget] :
         {std::pair<size_t, size_t>{1000, 20000}, {7, 20000}, {7, 5}, {1, 1}, {50, 1}}) {
      EXPECT_EQ(ListAll(filter, limit, budget), expected)
          << "limit " << limit << ", budget " << budget << ", tenant '" << filter.tenant
          << "', user '" << filter.user << "'";
    }
  }
}

TEST_F(JobListingTest, APageLooksAtNoMoreOfTheArchiveThanItsBudget) {
  Fill(300);
  JobFilter none;
  none.user = "nobody";
  auto end =
      ListJobs(jobs_, archive_, none, 0, 1000, 10, [](const v1::JobRecord&) { return true; });
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->more);
  // Ten summaries looked at: the page ends on the tenth archived id, with nothing in it.
  uint64_t tenth = 0;
  int seen = 0;
  for (const auto& job : all_) {
    if (IsTerminal(job.state()) && ++seen == 10) tenth = job.id();
  }
  EXPECT_EQ(end->next_after_id, tenth);
  EXPECT_TRUE(ListAll(none, 1000, 10).empty());
}

TEST_F(JobListingTest, AFullPageStopsWhereItsLastJobIs) {
  Fill(40);
  std::vector<uint64_t> first;
  auto end = ListJobs(jobs_, archive_, JobFilter{}, 0, 1000, 20000, [&](const v1::JobRecord& j) {
    first.push_back(j.id());
    return first.size() < 3;  // the byte bound says full after the third
  });
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->more);
  EXPECT_EQ(first, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(end->next_after_id, 3u);
}

}  // namespace
}  // namespace snn
