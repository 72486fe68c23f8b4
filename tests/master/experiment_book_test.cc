// The experiment book on its own (issue 37): deficit round robin gives users with short and
// with long experiments the same board time; each user lists only their own experiments; a
// service that ends fails what waits and bills each user's board time to their tenant; a
// master that restarts queues again what had not run.
#include "master/experiments/experiment_book.h"

#include <gtest/gtest.h>

#include "common/model/model.h"
#include "master/billing/billing_ledger.h"
#include "master/store/memory_store.h"
#include "tests/master/fake_agent_channel.h"

namespace snn {
namespace {

// A model with an input and an output population of two neurons each.
v1::ExperimentSpec Spec(uint32_t steps) {
  v1::ExperimentSpec spec;
  for (const char* name : {"in", "out"}) {
    v1::Population* p = spec.mutable_model()->add_populations();
    p->set_name(name);
    p->set_size(2);
    p->set_role(std::string(name) == "in" ? "input" : "output");
  }
  spec.set_steps(steps);
  return spec;
}

class ExperimentBookTest : public ::testing::Test {
 protected:
  ExperimentBookTest() : journal_(store_, [](std::function<void()> fn) { fn(); }) {
    usage_.set_billing(&ledger_);
    v1::JobRecord job;
    job.set_id(40);
    job.set_tenant("lab-a");
    job.set_tenant_job_id(7);
    job.set_state(v1::RUNNING);
    job.set_attempt(1);
    job.mutable_spec()->set_kind(v1::SERVICE);
    job.mutable_spec()->set_user("owner");
    job.mutable_spec()->mutable_service()->set_period_ms(10);
    job.mutable_spec()->mutable_service()->add_tenants("lab-b");
    job.mutable_spec()->mutable_task()->mutable_resources()->set_cores(4);
    v1::TaskRecord* task = job.add_tasks();
    task->set_node("node1");
    task->set_state(v1::TASK_RUNNING);
    task->set_attempt(1);
    jobs_.Restore(job);  // running already: Insert adds new jobs, pending
  }

  const v1::JobRecord& service() { return *jobs_.Find(40); }

  // `n` experiments of `steps` 1 ms steps for `user` of `tenant`; then (`pump`) turns go out.
  Result<v1::ExperimentSubmitResponse> Send(const std::string& tenant, const std::string& user,
                                            int n, uint32_t steps, bool pump = true) {
    std::vector<v1::ExperimentSpec> specs(n, Spec(steps));
    for (auto& spec : specs) {
      v1::NamedSpike* in = spec.add_inputs();
      in->set_population("in");
      in->set_neuron(1);
    }
    auto sent = book_.Submit(service(), tenant, user, std::move(specs));
    journal_.Commit();
    if (pump) book_.Pump();
    return sent;
  }

  // The agent runs the oldest turn: each experiment takes its steps of board time.
  std::string AnswerNext() {
    EXPECT_FALSE(agents_.turns.empty());
    auto sent = std::move(agents_.turns.front());
    agents_.turns.erase(agents_.turns.begin());
    v1::ExperimentBatchResponse response;
    for (const auto& run : sent.turn.runs()) {
      v1::ExperimentResult* r = response.add_results();
      r->set_id(run.id());
      r->set_start_us(clock_.NowUs());
      r->set_board_us(run.spec().steps() * 1000);
      clock_.AdvanceUs(r->board_us());
      r->set_end_us(clock_.NowUs());
      r->add_outputs()->set_population(sent.turn.user());  // whose it was
      board_us_[sent.turn.user()] += r->board_us();
    }
    sent.done(response);
    return sent.turn.user();
  }

  ManualClock clock_;
  MemoryStore store_;
  Journal journal_;
  JobTable jobs_;
  NodeRegistry nodes_;
  UsageRecorder usage_{nodes_, journal_};
  BillingLedger ledger_{store_};
  testing::FakeAgentChannel agents_;
  ExperimentBook book_{jobs_, journal_, store_, agents_, usage_, clock_};
  std::map<std::string, int64_t> board_us_;
};

TEST_F(ExperimentBookTest, UsersWithShortAndLongExperimentsGetTheSameBoardTime) {
  ASSERT_TRUE(Send("lab-a", "ann", 400, 1, false).ok());  // 1 ms each
  ASSERT_TRUE(Send("lab-a", "bob", 80, 5, false).ok());   // 5 ms each
  ASSERT_TRUE(Send("lab-b", "cyd", 40, 10).ok());         // 10 ms each, from an admitted tenant
  EXPECT_EQ(agents_.turns.size(), 2u);                    // two turns ahead at the agent, no more
  // While all three have experiments waiting (each has 400 ms of them), every round gives
  // each user one turn of the period's 10 ms.
  while (board_us_["ann"] < 300'000) {
    AnswerNext();
    EXPECT_LE(agents_.turns.size(), 2u);
  }
  for (const char* user : {"bob", "cyd"}) {
    EXPECT_NEAR(board_us_[user], board_us_["ann"], 10'000) << user;  // within one turn
  }
}

TEST_F(ExperimentBookTest, EachUserListsOnlyTheirOwnExperimentsAndResults) {
  ASSERT_TRUE(Send("lab-a", "ann", 3, 1).ok());
  ASSERT_TRUE(Send("lab-b", "cyd", 2, 1).ok());
  while (!agents_.turns.empty()) AnswerNext();
  v1::ExperimentListRequest all;
  all.set_outputs(true);
  auto cyd = book_.List(service(), "lab-b", "cyd", all);
  ASSERT_TRUE(cyd.ok());
  ASSERT_EQ(cyd->experiments_size(), 2);
  for (const auto& r : cyd->experiments()) {
    EXPECT_EQ(r.user(), "cyd");
    EXPECT_EQ(r.state(), v1::EXPERIMENT_DONE);
    ASSERT_EQ(r.outputs_size(), 1);
    EXPECT_EQ(r.outputs(0).population(), "cyd");  // ran in cyd's own turn
    EXPECT_FALSE(r.spec().has_model());
  }
  // The same user name in another tenant is someone else.
  auto other = book_.List(service(), "lab-a", "cyd", all);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->experiments_size(), 0);
  // A tenant the service does not list is refused.
  EXPECT_FALSE(ExperimentBook::Admits(service(), "lab-c").ok());
  EXPECT_TRUE(ExperimentBook::Admits(service(), "lab-b").ok());
}

// A finished experiment's record reaches the store a little after the turn's answer (a slow
// disk): until then a list shows it still running, never the state the store held before it
// ran (snnctl experiment submit --wait read "QUEUED" there and stopped with exit 1).
TEST_F(ExperimentBookTest, AnExperimentWhoseEndIsNotDurableYetIsListedAsRunning) {
  ASSERT_TRUE(Send("lab-a", "ann", 1, 1).ok());
  store_.HoldCommits();
  AnswerNext();
  v1::ExperimentListRequest finished;
  finished.set_finished_only(true);
  auto early = book_.List(service(), "lab-a", "ann", finished);
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->experiments_size(), 0);
  auto all = book_.List(service(), "lab-a", "ann", v1::ExperimentListRequest());
  ASSERT_EQ(all->experiments_size(), 1);
  EXPECT_EQ(all->experiments(0).state(), v1::EXPERIMENT_RUNNING);
  store_.ReleaseCommits();
  auto durable = book_.List(service(), "lab-a", "ann", finished);
  ASSERT_EQ(durable->experiments_size(), 1);
  EXPECT_EQ(durable->experiments(0).state(), v1::EXPERIMENT_DONE);
}

TEST_F(ExperimentBookTest, BadExperimentsAreRefusedWholeWithTheirNumber) {
  std::vector<v1::ExperimentSpec> specs(2, Spec(3));
  specs[1].add_inputs()->set_population("hidden");
  auto refused = book_.Submit(service(), "lab-a", "ann", specs);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "experiment 1: input 0: the model has no population 'hidden' (it has in (2), out (2))");
  specs[1].clear_inputs();
  specs[1].set_steps(0);
  EXPECT_EQ(book_.Submit(service(), "lab-a", "ann", specs).status().message(),
            "experiment 1: steps must be at least 1");
  specs[1].set_steps(61'000);
  EXPECT_NE(book_.Submit(service(), "lab-a", "ann", specs)
                .status()
                .message()
                .find("more than the 60 s of board time one experiment may take"),
            std::string::npos);
  book_.Pump();
  EXPECT_TRUE(agents_.turns.empty());
  auto listed = book_.List(service(), "lab-a", "ann", v1::ExperimentListRequest());
  EXPECT_EQ(listed->experiments_size(), 0);
}

TEST_F(ExperimentBookTest, AnEndedServiceFailsWhatWaitsAndBillsEachUsersBoardTime) {
  ASSERT_TRUE(Send("lab-a", "ann", 30, 1, false).ok());
  ASSERT_TRUE(Send("lab-b", "cyd", 30, 1).ok());
  EXPECT_EQ(AnswerNext(), "ann");  // 1-10; then ann's 11-20 go out
  EXPECT_EQ(AnswerNext(), "cyd");  // 31-40; then cyd's 41-50 go out
  book_.ServiceEnded(service(), "cancelled by owner");
  journal_.Commit();
  auto ann = book_.List(service(), "lab-a", "ann", v1::ExperimentListRequest());
  ASSERT_EQ(ann->experiments_size(), 30);
  EXPECT_EQ(ann->experiments(0).state(), v1::EXPERIMENT_DONE);
  EXPECT_EQ(ann->experiments(29).state(), v1::EXPERIMENT_FAILED);
  EXPECT_EQ(ann->experiments(29).error(), "the service ended before it ran: cancelled by owner");
  for (const auto& [tenant, user] : {std::pair{"lab-a", "ann"}, std::pair{"lab-b", "cyd"}}) {
    auto records = ledger_.Records(tenant, 0, clock_.NowMs() + 1);
    ASSERT_TRUE(records.ok());
    ASSERT_EQ(records->size(), 1u) << tenant;
    const v1::UsageRecord& r = records->front();
    EXPECT_EQ(r.kind(), "experiment");
    EXPECT_EQ(r.user(), user);
    EXPECT_EQ(r.busy_us(), board_us_[user]);
    EXPECT_EQ(r.experiments(), 10u);  // one turn of 10 ms, 1 ms each
    EXPECT_EQ(r.cores(), 4u);
  }
}

TEST_F(ExperimentBookTest, AMasterThatRestartsQueuesAgainWhatHadNotRun) {
  ASSERT_TRUE(Send("lab-a", "ann", 25, 1).ok());
  AnswerNext();  // ten ran; the other fifteen were at the agent when the master stopped
  ExperimentBook restarted(jobs_, journal_, store_, agents_, usage_, clock_);
  agents_.turns.clear();
  ASSERT_TRUE(restarted.Recover().ok());
  restarted.Pump();
  ASSERT_EQ(agents_.turns.size(), 2u);
  EXPECT_EQ(agents_.turns[0].turn.runs(0).id(), 11u);  // in order, from the first not run
  auto ann = restarted.List(service(), "lab-a", "ann", v1::ExperimentListRequest());
  EXPECT_EQ(ann->experiments_size(), 25);
  EXPECT_EQ(ann->queued(), 15u);
  // New experiments continue the numbering.
  std::vector<v1::ExperimentSpec> more(1, Spec(1));
  auto sent = restarted.Submit(service(), "lab-a", "ann", more);
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_EQ(sent->first_id(), 26u);
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

// Checking an experiment's inputs costs nothing per neuron: a model naming a trillion neurons
// (10,000 populations at the most a population may have, in well under the 1 MiB an experiment
// may take) is checked at once; a master that allocated per neuron would die of it.
TEST_F(ExperimentBookTest, AModelOfATrillionNeuronsIsCheckedWithoutAllocatingForThem) {
  v1::ExperimentSpec spec = Spec(1);
  for (int i = 0; i < 10'000; ++i) {
    v1::Population* p = spec.mutable_model()->add_populations();
    p->set_name("big" + std::to_string(i));
    p->set_size(100'000'000);
  }
  v1::NamedSpike* in = spec.add_inputs();
  in->set_population("big9999");
  in->set_neuron(99'999'999);
  auto sent = book_.Submit(service(), "lab-a", "ann", {spec});
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();  // the agent's build refuses it, later
  in->set_neuron(100'000'000);
  EXPECT_EQ(book_.Submit(service(), "lab-a", "ann", {spec}).status().message(),
            "experiment 0: input 0: population 'big9999' has 100000000 neurons: there is no "
            "neuron 100000000");
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

// An agent whose session drops as a turn is sent answers at once, on the same stack: the book
// puts the turn back, first, and tries again a second later, never in a loop (a master that
// looped here hung after a restart, before the agent had registered again).
class DroppingChannel : public testing::FakeAgentChannel {
 public:
  int sent = 0;
  void RunExperiments(const std::string&, const v1::ExperimentBatch&, TurnDone done) override {
    ++sent;
    done(Unavailable("the session to node1 dropped"));
  }
};

TEST_F(ExperimentBookTest, ATurnWhoseAgentIsGoneWaitsAgainFirstAndIsRetriedLater) {
  DroppingChannel dropping;
  ExperimentBook book(jobs_, journal_, store_, dropping, usage_, clock_);
  std::vector<v1::ExperimentSpec> specs(3, Spec(1));
  ASSERT_TRUE(book.Submit(service(), "lab-a", "ann", specs).ok());
  book.Pump();
  EXPECT_EQ(dropping.sent, 1);
  book.Pump();
  EXPECT_EQ(dropping.sent, 1);  // not before the pause
  clock_.AdvanceMs(ExperimentLimits::kRetryPauseMs);
  book.Pump();
  EXPECT_EQ(dropping.sent, 2);
  auto ann = book.List(service(), "lab-a", "ann", v1::ExperimentListRequest());
  ASSERT_EQ(ann->experiments_size(), 3);
  EXPECT_EQ(ann->queued(), 3u);  // none lost, none failed
}

// A service without a board holds nothing (one user's three pending services grew the master by
// 800 MB); what waits is bounded per user in every service together, so that no one user fills a
// service (its owner was refused) or the master.
TEST_F(ExperimentBookTest, NothingWaitsForAPendingServiceAndNoUserFillsOne) {
  auto specs = [](int n) {
    std::vector<v1::ExperimentSpec> out(n, Spec(1));
    for (auto& spec : out) {
      v1::NamedSpike* in = spec.add_inputs();
      in->set_population("in");
      in->set_neuron(1);
      (void)ValidateModel(*spec.mutable_model());  // as the book keeps it: defaults filled in
    }
    return out;
  };
  const size_t one = specs(1)[0].ByteSizeLong();
  ExperimentBook book{jobs_, journal_, store_, agents_, usage_, clock_, {10 * one, 25 * one}};

  v1::JobRecord pending = service();
  pending.set_state(v1::PENDING);
  auto refused = book.Submit(pending, "lab-a", "ann", specs(1));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("holds no board yet"), std::string::npos)
      << refused.status().message();

  auto ten = book.Submit(service(), "lab-a", "ann", specs(10));
  ASSERT_TRUE(ten.ok()) << ten.status().ToString();
  auto over = book.Submit(service(), "lab-a", "ann", specs(1));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kResourceExhausted);
  EXPECT_NE(over.status().message().find("one user may have waiting"), std::string::npos)
      << over.status().message();
  // The bound is the user's in every service together.
  v1::JobRecord other = service();
  other.set_id(41);
  other.set_tenant_job_id(8);
  EXPECT_EQ(book.Submit(other, "lab-a", "ann", specs(1)).status().code(), Code::kResourceExhausted);

  ASSERT_TRUE(book.Submit(service(), "lab-a", "bob", specs(10)).ok());
  ASSERT_TRUE(book.Submit(service(), "lab-b", "cyd", specs(5)).ok());
  // The service is full for the others, not for its owner.
  EXPECT_EQ(book.Submit(service(), "lab-b", "dan", specs(1)).status().code(),
            Code::kResourceExhausted);
  EXPECT_TRUE(book.Submit(service(), "lab-a", "owner", specs(5)).ok());
  journal_.Commit();
}

}  // namespace
}  // namespace snn
