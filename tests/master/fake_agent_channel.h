// A fake of the master's agent channel: records every launch and kill, and answers, drops
// (the session reset before the answer) or holds each launch as the test says.
#pragma once

#include <string>
#include <vector>

#include "master/jobs/agent_channel.h"

namespace snn::testing {

class FakeAgentChannel : public AgentChannel {
 public:
  struct SentLaunch {
    std::string node;
    v1::LaunchRequest request;
    LaunchDone done;  // empty once answered or dropped
  };
  struct SentKill {
    std::string node;
    v1::KillRequest request;
  };

  bool Reachable(const std::string& node) const override { return true; }
  uint64_t SessionEpoch(const std::string& node) const override { return epoch; }
  void Launch(const std::string& node, const v1::LaunchRequest& request, LaunchDone done) override {
    launches.push_back(SentLaunch{node, request, std::move(done)});
  }
  void Kill(const std::string& node, const v1::KillRequest& request) override {
    kills.push_back(SentKill{node, request});
  }
  void TaskOutput(const std::string& node, const v1::TaskOutputRequest&, OutputDone done) override {
    done(Unavailable("the fake channel reads no task output"));
  }
  void SimFault(const std::string& node, const v1::SimFaultRequest&, FaultDone done) override {
    done(Unavailable("the fake channel injects no fault"));
  }
  // Turns of experiment services: kept, for the test to answer.
  struct SentTurn {
    std::string node;
    v1::ExperimentBatch turn;
    TurnDone done;
  };
  std::vector<SentTurn> turns;
  void RunExperiments(const std::string& node, const v1::ExperimentBatch& turn,
                      TurnDone done) override {
    turns.push_back(SentTurn{node, turn, std::move(done)});
  }

  // The agent answers launch `i` with `status` (its task's state as the agent sees it).
  void Answer(size_t i, const v1::TaskStatus& status) {
    v1::LaunchResponse response;
    *response.mutable_status() = status;
    Take(i)(response);
  }
  // The session drops before launch `i` is answered (the agent was killed, say).
  void Drop(size_t i) { Take(i)(Unavailable("Connection reset by peer")); }

  std::vector<SentLaunch> launches;
  std::vector<SentKill> kills;
  uint64_t epoch = 1;  // the test counts up when a node registers on a new session

 private:
  LaunchDone Take(size_t i) {
    LaunchDone done = std::move(launches.at(i).done);
    launches.at(i).done = nullptr;
    return done;
  }
};

}  // namespace snn::testing
