// The experiments of every experiment service (a job of kind SERVICE): what users sent, whose
// turn is next, what ran and what it cost.
// - A user's experiments wait in their own queue; the service's tasks serve the queues in deficit
//   round robin (Shreedhar & Varghese, 1995): each turn adds the service's period_ms of board
//   time to the user's allowance, and the user's next experiments go while their cost (steps x
//   timestep: the board runs in real time) fits in it. Users with short and with long
//   experiments get the same board time; a turn's unused allowance is dropped when the user's
//   queue empties.
// - Each service task has at most two turns at its agent (one running, one next), so its board
//   never waits for the master between turns.
// - Every experiment is written to the store before its sender hears its ID, and again with its
//   results; a master that restarts queues again those that had not finished (one may then run
//   twice; its results are recorded once).
// - Results are read by their sender only. When the service ends, each user's board time is
//   billed to their tenant (a usage record of kind "experiment"); the service's own record bills
//   its owner for the rest of the time it held the board. A turn still running then is recorded
//   for its user but billed to the owner, who held the board.
// Thread contract: only on the master's io thread.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "master/jobs/agent_channel.h"
#include "master/jobs/job_table.h"
#include "master/jobs/usage_recorder.h"
#include "master/store/journal.h"
#include "proto/experiment.pb.h"

namespace snn {

inline constexpr char kExperimentKeyPrefix[] = "exp/";
std::string ExperimentKey(uint64_t service, uint64_t id);

struct ExperimentLimits {
  static constexpr int kMaxPerRequest = 1000;
  static constexpr size_t kMaxWaitingPerUser = 100'000;
  static constexpr size_t kMaxSpecBytes = 1u << 20;       // one experiment: model and inputs
  static constexpr size_t kMaxWaitingBytes = 256u << 20;  // one service, all users
  // One user's, in every service together: no one user fills a service, or the master.
  static constexpr size_t kMaxUserWaitingBytes = 64u << 20;
  static constexpr int64_t kMaxBoardMs = 60'000;     // one experiment's steps x timestep
  static constexpr size_t kMaxTurnBytes = 2u << 20;  // the experiments sent in one turn
  static constexpr uint32_t kDefaultPeriodMs = 20;
  static constexpr int kTurnsAhead = 2;           // per service task, at its agent
  static constexpr int64_t kRetryPauseMs = 1000;  // after a turn's agent was unreachable
};

// What may wait (tests make them small).
struct ExperimentBounds {
  size_t user_bytes = ExperimentLimits::kMaxUserWaitingBytes;
  size_t service_bytes = ExperimentLimits::kMaxWaitingBytes;
};

class ExperimentBook {
 public:
  ExperimentBook(JobTable& jobs, Journal& journal, Store& store, AgentChannel& agents,
                 UsageRecorder& usage, const Clock& clock, ExperimentBounds bounds = {})
      : jobs_(jobs),
        journal_(journal),
        store_(store),
        agents_(agents),
        usage_(usage),
        clock_(clock),
        bounds_(bounds) {}

  // Queues `specs` for `user` of `tenant` in `service` (running: a service still pending holds
  // no board, and nothing is kept for it; it must admit the tenant). Bounded per user in all
  // services (kMaxUserWaitingBytes) and per service (kMaxWaitingBytes, which the service's
  // owner may pass: others cannot shut the owner out of its own service).
  // The records are in the journal: commit, and answer once durable.
  Result<v1::ExperimentSubmitResponse> Submit(const v1::JobRecord& service,
                                              const std::string& tenant, const std::string& user,
                                              std::vector<v1::ExperimentSpec> specs);
  // The caller's own experiments in `service`, oldest first.
  Result<v1::ExperimentListResponse> List(const v1::JobRecord& service, const std::string& tenant,
                                          const std::string& user,
                                          const v1::ExperimentListRequest& request);
  // Sends the next turns to every service task with room for one.
  void Pump();
  // `service` has ended: its waiting experiments fail with `reason`, its agents forget its
  // tasks, and its users' board time is billed (in the journal: the caller commits).
  void ServiceEnded(const v1::JobRecord& service, const std::string& reason);
  // Loads what the store holds (a master starting): experiments of running services wait
  // again; those of services that ended are failed.
  Status Recover();

  // Whether `tenant` may send experiments to `service`, or why not.
  static Status Admits(const v1::JobRecord& service, const std::string& tenant);

 private:
  struct UserQueue {
    std::deque<uint64_t> waiting;
    int64_t allowance_us = 0;
  };
  struct UserSums {
    int64_t board_us = 0;
    uint32_t experiments = 0;
    int64_t first_us = 0, last_us = 0;
    uint32_t number = 0;  // in the order users came to the service
  };
  struct Service {
    uint64_t next_id = 1;
    bool ended = false;
    std::map<std::string, UserQueue> queues;        // by "tenant/user"
    std::deque<std::string> ring;                   // users with experiments waiting, in turn
    std::map<uint64_t, v1::ExperimentRecord> live;  // waiting or running
    // Finished, their records not yet durable: listed as still running until they are (the
    // store still holds what was there before).
    std::set<uint64_t> settling;
    std::map<std::string, std::vector<uint64_t>> ids;  // every experiment of each user
    std::map<std::string, size_t> unfinished;          // each user's in `live`
    std::map<std::string, UserSums> sums;
    std::map<uint32_t, int> turns_out;  // by task index
    size_t waiting_bytes = 0;
    int64_t retry_at_ms = 0;  // no turn before (an agent was unreachable)
  };

  // Steps, board time, size and inputs of one experiment whose model passed ValidateModel.
  static Status Check(const v1::ExperimentSpec& spec);
  static int64_t CostUs(const v1::ExperimentSpec& spec);
  void CountWaiting(const std::string& user, size_t bytes, bool add);
  void Enqueue(Service& s, const std::string& who, uint64_t id, bool front);
  // The next turn from `s`'s queues, or an empty batch.
  v1::ExperimentBatch NextTurn(Service& s, int64_t period_us);
  void SendTurn(const v1::JobRecord& job, const v1::TaskRecord& task, v1::ExperimentBatch turn);
  void TurnEnded(uint64_t service_id, uint32_t index, const std::string& board,
                 const std::vector<uint64_t>& ids, Result<v1::ExperimentBatchResponse> result);
  // Writes a finished experiment (without its model and inputs) and forgets it once durable.
  void Finish(Service& s, v1::ExperimentRecord record);
  void Bill(const v1::JobRecord& job, Service& s);

  JobTable& jobs_;
  Journal& journal_;
  Store& store_;
  AgentChannel& agents_;
  UsageRecorder& usage_;
  const Clock& clock_;
  std::map<uint64_t, Service> services_;  // by the service's global job ID
  const ExperimentBounds bounds_;
  std::map<std::string, size_t> user_waiting_bytes_;  // by user name, every service together
  bool pumping_ = false;  // a turn's answer may come while Pump sends (a session that drops)
  bool pump_again_ = false;
};

}  // namespace snn
