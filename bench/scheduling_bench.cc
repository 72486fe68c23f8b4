// One scheduling pass of the master at scale: 10,000 nodes x 4 boards (16x16 cores each),
// about 97% busy with running jobs of random rectangles, and 100,000 pending jobs (1 to 64
// cores, some gangs, 100 tenants, time limits from 10 minutes to a day). A pass is what the
// master's RunSchedulingPass does, through the same code (CollectPassJobs): order the pending
// jobs by multifactor priority (fair share charged), turn the pending and the running jobs of
// the job table into scheduler jobs, and plan (EASY backfill with a reservation).
// The first pass fills every gap a pending job fits (a cold start: tens of thousands of
// starts); its starts are applied, as the master would. Each following pass is the steady
// state: 200 running jobs end, the pass runs, its starts are applied, and as many new jobs
// are submitted, so 100,000 stay pending. Prints every pass, then the cold pass, and the
// median of the last five steady passes as the last line, `scheduling pass ms: N`.
// --quotas: 50 of the 100 tenants have a limit and a guarantee in the pool (quotas are kept
// each pass, and preemption may reclaim a guarantee).
// --tree: the 100 tenants are projects in an account tree 3 deep (an institute > 10 groups > 10
// projects each): each project's nominal a hundredth of the pool, each group's borrowing limit
// a twentieth and lending limit a fortieth (issue 40).
// --accrue_per_tenant N: the policy's accrual limit on (each full order then also ranks every
// pending job within its tenant).
// --array N: also a job array of N one-core elements, at most 64 running (array: "0-N-1%64"),
// pending from the start; its starts split elements off as the master does (issue 40).
// Like the master under etc/systemd/snn-master.service, it runs with malloc on huge pages
// (GLIBC_TUNABLES=glibc.malloc.hugetlb=1: it starts itself again with it unless the variable is
// set already); --small_pages measures with the default 4 KiB pages.
//   scheduling_bench [--nodes N] [--pending N] [--passes N] [--quotas] [--tree]
//                    [--accrue_per_tenant N] [--array N] [--small_pages]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "common/base/array_spec.h"
#include "common/base/clock.h"
#include "common/base/job_validation.h"
#include "common/base/rect_allocator.h"
#include "common/daemon/daemon_init.h"
#include "master/jobs/job_arrays.h"
#include "master/jobs/job_table.h"
#include "master/jobs/pass_jobs.h"
#include "master/sched/policy_config.h"
#include "master/sched/queue_order.h"
#include "master/sched/scheduler.h"
#include "master/sched/start_forecast.h"

namespace {

constexpr int64_t kNow = 1'700'000'000'000;

struct Cluster {
  std::vector<snn::BoardCapacity> boards;
  std::vector<uint64_t> running;  // ids, in the job table
};

void SetTasks(snn::v1::JobRecord& job, const std::vector<snn::TaskPlacement>& tasks) {
  job.clear_tasks();
  for (const auto& p : tasks) {
    auto* t = job.add_tasks();
    t->set_index(static_cast<uint32_t>(job.tasks_size() - 1));
    t->set_node(p.node);
    t->set_board(p.board);
    t->set_state(snn::v1::TASK_RUNNING);
    auto* rect = t->mutable_mapping()->mutable_rect();
    rect->set_x(p.rect.x);
    rect->set_y(p.rect.y);
    rect->set_width(p.rect.w);
    rect->set_height(p.rect.h);
  }
}

snn::v1::JobRecord NewJob(snn::JobTable& table, std::mt19937_64& rng) {
  snn::v1::JobRecord job;
  job.set_id(table.NextJobId());
  job.set_tenant("t" + std::to_string(rng() % 100));
  job.set_tenant_job_id(table.NextTenantJobId(job.tenant()));
  job.set_state(snn::v1::PENDING);
  auto* spec = job.mutable_spec();
  spec->set_pool("default");
  spec->set_queue("default");
  auto* r = spec->mutable_task()->mutable_resources();
  r->set_ksps(10);
  r->set_streams(1);
  return job;
}

Cluster BuildBusyCluster(uint32_t nodes, snn::JobTable& table, std::mt19937_64& rng) {
  Cluster c;
  std::uniform_int_distribution<uint32_t> side(1, 8), minutes(10, 1440), started(0, 600);
  for (uint32_t n = 0; n < nodes; ++n) {
    for (uint32_t b = 0; b < 4; ++b) {
      auto grid = std::make_shared<snn::CoreGrid>(16, 16);
      snn::BoardCapacity board;
      board.node = "node" + std::to_string(n);
      board.board = b;
      board.type = "sim-v1";
      board.pools = {"default"};
      board.largest_live = snn::Rect{0, 0, 16, 16};
      board.ksps_total = board.ksps_free = 100000;
      board.streams_total = board.streams_free = 64;
      // Random rectangles until the board is about 97% busy.
      for (int tries = 0; tries < 200 && grid->free_count() > 8; ++tries) {
        snn::CoreRequest req;
        req.width = side(rng);
        req.height = side(rng);
        auto p = snn::PlaceCores(*grid, req, snn::FitPolicy::kBestFit);
        if (!p) continue;
        grid->Occupy(p->rect);
        snn::v1::JobRecord job = NewJob(table, rng);
        auto* r = job.mutable_spec()->mutable_task()->mutable_resources();
        r->set_shape_width(p->rect.w);
        r->set_shape_height(p->rect.h);
        const int64_t ran = int64_t{started(rng)} * 60'000;
        job.set_submit_ms(kNow - ran);
        // Still within its limit.
        job.mutable_spec()->set_time_limit_s(static_cast<uint32_t>(ran / 1000) + minutes(rng) * 60);
        SetTasks(job, {snn::TaskPlacement{board.node, b, p->rect}});
        snn::v1::JobRecord& stored = table.Insert(std::move(job));
        table.SetState(stored, snn::v1::RUNNING, kNow - ran, "started");
        board.ksps_free -= 10;
        board.streams_free -= 1;
        c.running.push_back(stored.id());
      }
      board.grid = grid;
      // The master keeps each board's free rectangles with its free map (NodeRegistry).
      auto mers = std::make_shared<std::vector<snn::Rect>>(snn::MaximalEmptyRectangles(*grid));
      board.max_mer_area = snn::LargestArea(*mers);
      board.mers = std::move(mers);
      c.boards.push_back(std::move(board));
    }
  }
  return c;
}

void AddPending(snn::JobTable& table, uint32_t count, std::mt19937_64& rng) {
  const uint32_t sizes[] = {1, 2, 4, 8, 16, 32, 64};
  std::uniform_int_distribution<uint32_t> minutes(10, 1440);
  for (uint32_t i = 0; i < count; ++i) {
    snn::v1::JobRecord job = NewJob(table, rng);
    job.set_submit_ms(kNow - static_cast<int64_t>(rng() % 86'400'000));
    auto* spec = job.mutable_spec();
    spec->set_time_limit_s(minutes(rng) * 60);
    spec->set_min_replicas(rng() % 10 == 0 ? 2 + static_cast<uint32_t>(rng() % 3) : 1);
    spec->mutable_task()->mutable_resources()->set_cores(sizes[rng() % 7]);
    table.Insert(std::move(job));
  }
}

}  // namespace

// One array job of `elements` elements (none: 0), pending an hour; its id.
snn::Result<uint64_t> AddArrayJob(snn::JobTable& table, std::mt19937_64& rng, uint32_t elements) {
  const uint32_t array_elements = elements;
  if (array_elements == 0) return uint64_t{0};
  {
    snn::v1::JobRecord array = NewJob(table, rng);
    array.set_submit_ms(kNow - 3'600'000);
    auto* spec = array.mutable_spec();
    spec->set_time_limit_s(3600);
    spec->set_min_replicas(1);
    spec->mutable_task()->mutable_resources()->set_cores(1);
    auto parsed = snn::ParseArraySpec("0-" + std::to_string(array_elements - 1) + "%64");
    if (!parsed.ok()) {
      return parsed.status();
    }
    *spec->mutable_array() = *parsed;
    *array.mutable_array_left() = parsed->ranges();
    const uint64_t array_id = array.id();
    std::printf("array job of %u elements: %zu bytes as one record\n", array_elements,
                array.ByteSizeLong());
    table.Insert(std::move(array));
    return array_id;
  }
}

// The policy: the defaults, with --quotas (half the tenants capped in the pool, each with a
// guarantee) or --tree (an institute > 10 groups > 10 projects, the jobs' tenants).
snn::Result<snn::v1::SchedulingConfig> BenchPolicy(uint32_t nodes, bool quotas, bool tree,
                                                   uint32_t accrue_per_tenant) {
  snn::v1::SchedulingConfig config = snn::DefaultSchedulingConfig();
  config.mutable_priority()->set_accrue_per_tenant(accrue_per_tenant);
  if (quotas) {  // half the tenants capped in the pool, each with a guarantee
    for (int t = 0; t < 50; ++t) {
      auto* tenant = config.add_tenants();
      tenant->set_name("t" + std::to_string(t));
      tenant->set_weight(1);
      auto* cap = tenant->add_quotas();
      cap->set_pool("default");
      cap->set_limit(16 * 16 * 4 * uint64_t{nodes} / 60);
      cap->set_guaranteed(16 * 16 * 4 * uint64_t{nodes} / 200);
    }
  }
  if (tree) {  // an institute > 10 groups > 10 projects (the jobs' tenants)
    const uint64_t pool = 16 * 16 * 4 * uint64_t{nodes};
    auto add = [&](const std::string& name, const std::string& parent) {
      auto* t = config.add_tenants();
      t->set_name(name);
      t->set_weight(1);
      t->set_parent(parent);
      auto* cap = t->add_quotas();
      cap->set_pool("default");
      return cap;
    };
    add("inst", "")->set_nominal(0);
    for (int g = 0; g < 10; ++g) {
      auto* cap = add("g" + std::to_string(g), "inst");
      cap->set_borrowing_limit(pool / 20);
      cap->set_lending_limit(pool / 40);
      for (int p = 0; p < 10; ++p) {
        add("t" + std::to_string(g * 10 + p), "g" + std::to_string(g))->set_nominal(pool / 100);
      }
    }
    if (auto s = snn::ValidatePolicy(config); !s.ok()) {
      return s;
    }
  }
  return config;
}

// What `snnctl jobs --start` costs: the forecast of the first 1,000 pending jobs, from the
// order the last full pass found, as the master works it out (on its forecast thread).
void ReportForecast(snn::JobTable& table, snn::QueueOrder& order, const Cluster& cluster,
                    const snn::SchedulerPolicy& policy) {
  const auto forecast_start = snn::MonotonicNow();
  snn::SchedulerInput head = snn::CollectPassInput(table, order, cluster.boards, kNow, 1000);
  snn::ForecastLimits limits;
  limits.max_jobs = 1000;
  const auto forecasts = snn::ForecastStarts(head, policy, limits);
  size_t planned = 0;
  for (const auto& f : forecasts) planned += f.basis == snn::StartForecast::Basis::kPlan ? 1 : 0;
  std::printf(
      "start forecast ms: %.1f (%zu of the first %zu pending jobs planned)\n",
      std::chrono::duration<double, std::milli>(snn::MonotonicNow() - forecast_start).count(),
      planned, forecasts.size());
}

struct BenchArgs {
  uint32_t nodes = 10000, pending = 100000;
  int passes = 10;
  bool quotas = false, small_pages = false, tree = false;
  uint32_t accrue_per_tenant = 0, array_elements = 0;
};

bool ParseArgs(int argc, char** argv, BenchArgs& a) {
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--quotas") == 0) {
      a.quotas = true;
    } else if (std::strcmp(argv[i], "--tree") == 0) {
      a.tree = true;
    } else if (std::strcmp(argv[i], "--small_pages") == 0) {
      a.small_pages = true;
    } else if (std::strcmp(argv[i], "--nodes") == 0 && has_value) {
      a.nodes = static_cast<uint32_t>(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--pending") == 0 && has_value) {
      a.pending = static_cast<uint32_t>(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--accrue_per_tenant") == 0 && has_value) {
      a.accrue_per_tenant = static_cast<uint32_t>(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--array") == 0 && has_value) {
      a.array_elements = static_cast<uint32_t>(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--passes") == 0 && has_value) {
      a.passes = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: scheduling_bench [--nodes N] [--pending N] [--passes N] [--quotas] "
                   "[--tree] [--accrue_per_tenant N] [--array N] [--small_pages]\n");
      return false;
    }
  }
  return true;
}

// Starts the plan's jobs as the master does (an array's element splits off, as
// SchedulingDriver does): how many array elements started, and how many starts named the array.
std::pair<size_t, size_t> ApplyStarts(
    snn::JobTable& table, const snn::SchedulePlan& plan, uint64_t array_id,
    std::vector<uint64_t>& running,
    const std::function<void(const snn::TaskPlacement&, bool)>& change_board) {
  size_t array_starts = 0, array_decisions = 0;
  for (const auto& st : plan.starts) {
    snn::v1::JobRecord* record = table.Find(st.job_id);
    if (st.job_id == array_id) {  // an element splits off, as SchedulingDriver does
      ++array_decisions;
      if (record->array_left_size() == 0 ||
          snn::ArrayStartsAllowed(*record, table.ArrayActive(array_id)) == 0) {
        continue;
      }
      snn::v1::JobRecord element =
          snn::ArrayElementOf(*record, snn::PopFirst(*record->mutable_array_left()));
      element.set_id(table.NextJobId());
      table.ArrayChanged(*record, kNow);
      record = &table.Insert(std::move(element));
      ++array_starts;
    }
    for (const auto& t : st.tasks) change_board(t, true);
    SetTasks(*record, st.tasks);
    table.SetState(*record, snn::v1::RUNNING, kNow, "started");
    running.push_back(record->id());
  }
  return {array_starts, array_decisions};
}

int main(int argc, char** argv) {
  BenchArgs args;
  if (!ParseArgs(argc, argv, args)) return 2;
  const uint32_t nodes = args.nodes, pending = args.pending;
  const int passes = args.passes;
  const bool quotas = args.quotas, small_pages = args.small_pages, tree = args.tree;
  const uint32_t accrue_per_tenant = args.accrue_per_tenant, array_elements = args.array_elements;
  // glibc reads its tunables at start only: set, then start again.
  if (!small_pages && std::getenv("GLIBC_TUNABLES") == nullptr) {
    setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
    execv("/proc/self/exe", argv);
    std::perror("scheduling_bench: starting again with huge pages");  // measured without
  }
  std::printf("malloc: %s\n", std::getenv("GLIBC_TUNABLES") != nullptr
                                  ? std::getenv("GLIBC_TUNABLES")
                                  : "default (4 KiB pages)");
  snn::KeepFreedMemory();  // as snn-master does
  std::mt19937_64 rng(42);
  snn::JobTable table;
  Cluster cluster = BuildBusyCluster(nodes, table, rng);
  AddPending(table, pending, rng);
  auto array_id = AddArrayJob(table, rng, array_elements);
  if (!array_id.ok()) {
    std::fprintf(stderr, "scheduling_bench: %s\n", array_id.status().ToString().c_str());
    return 2;
  }
  uint64_t free_cores = 0;
  for (const auto& b : cluster.boards) free_cores += b.grid->free_count();
  std::printf("%zu boards, %zu running jobs, %llu free cores, %u pending jobs\n",
              cluster.boards.size(), cluster.running.size(),
              static_cast<unsigned long long>(free_cores), pending);

  auto config = BenchPolicy(nodes, quotas, tree, accrue_per_tenant);
  if (!config.ok()) {
    std::fprintf(stderr, "scheduling_bench: %s\n", config.status().ToString().c_str());
    return 2;
  }
  const snn::SchedulerPolicy policy = snn::ToSchedulerPolicy(*config);
  std::vector<double> times;
  double cold_ms = 0;
  std::map<std::pair<std::string, uint32_t>, size_t> board_index;
  for (size_t i = 0; i < cluster.boards.size(); ++i) {
    board_index[{cluster.boards[i].node, cluster.boards[i].board}] = i;
  }
  auto change_board = [&](const snn::TaskPlacement& t, bool occupy) {
    snn::BoardCapacity& b = cluster.boards[board_index.at({t.node, t.board})];
    auto grid = std::make_shared<snn::CoreGrid>(*b.grid);
    if (occupy)
      grid->Occupy(t.rect);
    else
      grid->Release(t.rect);
    b.grid = grid;
    auto mers = std::make_shared<std::vector<snn::Rect>>(snn::MaximalEmptyRectangles(*grid));
    b.max_mer_area = snn::LargestArea(*mers);
    b.mers = std::move(mers);
  };
  snn::QueueOrder order;
  order.Configure(*config);
  std::vector<uint64_t>& running = cluster.running;
  for (int pass = 0; pass <= passes; ++pass) {
    if (pass > 0) {  // some running jobs end
      for (int k = 0; k < 200 && !running.empty(); ++k) {
        const size_t victim = rng() % running.size();
        snn::v1::JobRecord* job = table.Find(running[victim]);
        for (const auto& t : table.views().Find(job->id())->tasks) change_board(t, false);
        table.SetState(*job, snn::v1::COMPLETED, kNow, "done");
        running[victim] = running.back();
        running.pop_back();
      }
    }
    const auto start = snn::MonotonicNow();
    snn::SchedulerInput in = snn::CollectPassInput(table, order, cluster.boards, kNow);
    const size_t pending_jobs = in.pending.size();
    const auto collected = snn::MonotonicNow();
    const snn::SchedulePlan plan = snn::PlanPass(std::move(in), policy);
    const double ms =
        std::chrono::duration<double, std::milli>(snn::MonotonicNow() - start).count();
    if (pass > 0) times.push_back(ms);
    if (pass == 0) cold_ms = ms;
    std::printf(
        "%s pass: %.1f ms (priorities and scheduler jobs %.1f ms), %zu starts, %zu pending\n",
        pass == 0 ? "cold" : "steady", ms,
        std::chrono::duration<double, std::milli>(collected - start).count(), plan.starts.size(),
        pending_jobs);
    // Apply the starts, as the master does.
    const auto [array_starts, array_decisions] =
        ApplyStarts(table, plan, *array_id, running, change_board);
    if (array_elements > 0) std::printf("  of which array elements: %zu\n", array_starts);
    // Keep the queue at its size: as many new jobs as started.
    AddPending(table, static_cast<uint32_t>(plan.starts.size() - array_decisions), rng);
  }
  // The first passes after the cold one still start thousands of jobs (the jobs submitted to
  // replace the started ones fit holes); the steady state is the last five.
  if (times.size() > 5) times.erase(times.begin(), times.end() - 5);
  std::sort(times.begin(), times.end());
  std::printf("cold pass ms: %.1f\n", cold_ms);
  std::printf("scheduling pass ms: %.1f\n", times.empty() ? 0.0 : times[times.size() / 2]);
  ReportForecast(table, order, cluster, policy);
  return 0;
}
