// The master's job components in-process, for tests: a memory store, a manual clock, agents
// played by the test (a fake channel, and nodes registered with unconnected sessions), and the
// scheduling passes the test runs itself.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "master/jobs/job_components.h"
#include "master/store/memory_store.h"
#include "tests/master/fake_agent_channel.h"

namespace snn {

class InProcessMaster : public ::testing::Test {
 protected:
  InProcessMaster()
      : journal_(store_, [](std::function<void()> fn) { fn(); }),
        components_(jobs_, archive_, nodes_, agents_, journal_, clock_, JobOptions(),
                    [this] { ++schedule_requests_; }) {}

  // Node `name` in pool default with `boards` boards of side x side cores, 1000 ksps and
  // `streams` streams each; `dead_middle`: the middle core is dead.
  void AddNode(const std::string& name, int boards, const std::string& type = "sim-v1",
               uint32_t side = 4, uint32_t health = 100, bool dead_middle = false,
               uint32_t streams = 4) {
    v1::NodeRecord node;
    node.set_name(name);
    node.add_pools("default");
    for (int i = 0; i < boards; ++i) {
      auto* b = node.add_boards();
      b->set_index(i);
      b->set_type(type);
      b->set_width(side);
      b->set_height(side);
      b->set_ksps(1000);
      b->set_streams(streams);
      b->set_health(health);
      if (dead_middle) {
        b->add_dead_cores()->set_x(side / 2);
        b->mutable_dead_cores(0)->set_y(side / 2);
      }
    }
    // An unconnected session for the registry; launches and kills go to the fake channel.
    auto session = Connection::Create(tcp::socket(io_), 1 << 20, nullptr, nullptr);
    sessions_.push_back(session);
    nodes_.Register(node, session, clock_.NowMs());
  }

  asio::io_context io_;
  ManualClock clock_;
  MemoryStore store_;
  Journal journal_;
  JobTable jobs_;
  JobArchive archive_{store_};
  NodeRegistry nodes_;
  testing::FakeAgentChannel agents_;
  int schedule_requests_ = 0;
  JobComponents components_;
  std::vector<std::shared_ptr<Connection>> sessions_;
};

}  // namespace snn
