#include "nodeagent/hal/sim_board.h"

#include <algorithm>
#include <chrono>

#include "common/base/clock.h"
#include "nodeagent/hal/lif_network.h"
#include "nodeagent/hal/nir_network.h"

namespace snn {

SimBoard::SimBoard(v1::BoardInfo info, uint64_t network_memory_bytes)
    : info_(std::move(info)),
      dead_(size_t{info_.width()} * info_.height(), false),
      network_memory_bytes_(network_memory_bytes),
      owner_(size_t{info_.width()} * info_.height()) {
  for (const auto& c : info_.dead_cores()) {
    if (c.x() < info_.width() && c.y() < info_.height()) dead_[Cell(c.x(), c.y())] = true;
  }
}

Status SimBoard::Configure(const TaskKey& task, const std::vector<v1::CoreXY>& cores) {
  if (owners_.count(task)) return FailedPrecondition("task is already configured on this board");
  for (const auto& c : cores) {
    if (c.x() >= info_.width() || c.y() >= info_.height()) {
      return InvalidArgument("core outside the mesh");
    }
    const size_t cell = Cell(c.x(), c.y());
    if (dead_[cell]) return FailedPrecondition("core is dead");
    if (owner_[cell]) return FailedPrecondition("core is taken by another task");
  }
  auto& cells = owners_[task];
  for (const auto& c : cores) {
    const size_t cell = Cell(c.x(), c.y());
    owner_[cell] = task;
    cells.push_back(cell);
  }
  return Status::Ok();
}

void SimBoard::Release(const TaskKey& task) {
  auto it = owners_.find(task);
  if (it == owners_.end()) return;
  for (size_t cell : it->second) owner_[cell].reset();
  owners_.erase(it);
}

Status SimBoard::Reset(const TaskKey& task) {
  if (failed_) return FailedPrecondition("the board has failed");
  if (owners_.find(task) == owners_.end()) {
    return FailedPrecondition("the task holds no cores on this board");
  }
  ++resets_;
  return Status::Ok();
}

const TaskKey* SimBoard::Owner(uint32_t x, uint32_t y) const {
  if (x >= info_.width() || y >= info_.height()) return nullptr;
  const auto& owner = owner_[Cell(x, y)];
  return owner ? &*owner : nullptr;
}

}  // namespace snn

namespace snn {

Status SimBoard::KillCore(uint32_t x, uint32_t y) {
  if (x >= info_.width() || y >= info_.height()) {
    return InvalidArgument("core " + std::to_string(x) + "," + std::to_string(y) +
                           " is outside the " + std::to_string(info_.width()) + "x" +
                           std::to_string(info_.height()) + " mesh");
  }
  if (dead_[Cell(x, y)]) return Status::Ok();
  dead_[Cell(x, y)] = true;
  ++cores_killed_;
  auto* c = info_.add_dead_cores();
  c->set_x(x);
  c->set_y(y);
  return Status::Ok();
}

v1::BoardInfo SimBoard::Describe() const {
  v1::BoardInfo info = info_;
  const uint32_t penalty = std::min<uint32_t>(info.health(), 10 * cores_killed_);
  info.set_health(failed_ ? 0 : info.health() - penalty);
  const uint64_t capacity =
      host_ksps_ > 0 ? std::min<uint64_t>(host_ksps_, info.ksps()) : info.ksps();
  info.set_measured_ksps(failed_ ? 0 : static_cast<uint32_t>(capacity * speed_percent_ / 100));
  info.set_latency_us(latency_us_);
  return info;
}

Result<NetworkBuild> SimBoard::PrepareNetwork(const v1::Model* model, uint32_t num_cores) {
  if (failed_) return FailedPrecondition("the board has failed");
  SimNetworkLimits limits;
  limits.num_cores = num_cores;
  limits.neurons_per_core = info_.neurons_per_core();
  if (model == nullptr) {
    return NetworkBuild([limits]() -> Result<std::unique_ptr<SpikeNetwork>> {
      return std::unique_ptr<SpikeNetwork>(new SinkNetwork(limits));
    });
  }
  // ksps is spikes per millisecond.
  const double per_step =
      static_cast<double>(info_.ksps()) * speed_percent_ / 100 * model->timestep_ms();
  limits.spikes_per_step = std::max<uint64_t>(1, static_cast<uint64_t>(per_step));
  const uint64_t board_cores = std::max<uint64_t>(1, uint64_t{info_.width()} * info_.height());
  limits.max_state_bytes =
      std::min<uint64_t>(limits.max_state_bytes, network_memory_bytes_ / board_cores *
                                                     std::min<uint64_t>(num_cores, board_cores));
  limits.memory_share = "this task's share, " + std::to_string(num_cores) + " of the board's " +
                        std::to_string(board_cores) + " cores, of its " +
                        std::to_string(network_memory_bytes_ >> 20) +
                        " MiB (snn-agent --sim_board_memory_mb)";
  return NetworkBuild([limits, model = *model]() mutable -> Result<std::unique_ptr<SpikeNetwork>> {
    return BuildNetwork(model, limits);
  });
}

namespace {

// Sources that each drive one output neuron: every step S spikes in and S out.
v1::Model CalibrationModel(uint32_t size) {
  v1::Model m;
  m.set_timestep_ms(1);
  for (const char* name : {"src", "dst"}) {
    auto* p = m.add_populations();
    p->set_name(name);
    p->set_size(size);
    p->set_role(std::string(name) == "src" ? "input" : "output");
    auto* n = p->mutable_neuron();
    n->set_tau_m_ms(20);
    n->set_v_rest(0);
    n->set_v_reset(0);
    n->set_v_threshold(1);
    n->set_refractory_ms(0);
  }
  auto* pr = m.add_projections();
  pr->set_from("src");
  pr->set_to("dst");
  pr->set_connectivity("one_to_one");
  pr->set_weight(2);
  return m;
}

}  // namespace

void SimBoard::Fingerprint() {
  const uint32_t npc = std::max<uint32_t>(1, info_.neurons_per_core());
  const uint32_t size = std::min<uint32_t>(4096, npc * 8);
  const v1::Model model = CalibrationModel(size);
  SimNetworkLimits limits;
  limits.num_cores = 2 * ((size + npc - 1) / npc);
  limits.neurons_per_core = npc;
  auto built = LifNetwork::Build(model, limits);
  if (!built.ok()) return;
  LifNetwork& net = **built;
  std::vector<wire::Spike> in(size), out(size);
  for (uint32_t i = 0; i < size; ++i) {
    in[i] = wire::Spike{static_cast<uint16_t>(i / npc), static_cast<uint16_t>(i % npc), 0};
  }
  double best = 0;  // spikes a second; the best of three short runs resists a busy host
  for (int run = 0; run < 3; ++run) {
    const uint64_t before = net.counters().delivered;
    const Stopwatch watch;
    do {
      for (auto& s : in) s.step = net.now_step();
      net.Inject(in.data(), in.size());
      net.Step(1);
      while (net.ReadOutput(out.data(), out.size()) > 0) {
      }
    } while (watch.Seconds() < 0.01);
    best = std::max(best, static_cast<double>(net.counters().delivered - before) / watch.Seconds());
  }
  std::vector<double> rounds;
  for (int i = 0; i < 101; ++i) {
    const Stopwatch watch;
    wire::Spike one = in[0];
    one.step = net.now_step();
    net.Inject(&one, 1);
    net.Step(2);
    while (net.ReadOutput(out.data(), out.size()) > 0) {
    }
    rounds.push_back(watch.Seconds());
  }
  std::nth_element(rounds.begin(), rounds.begin() + 50, rounds.end());
  host_ksps_ = static_cast<uint64_t>(best / 1000);
  latency_us_ = std::max<uint32_t>(1, static_cast<uint32_t>(rounds[50] * 1e6));
}

Status SimBoard::SetSpeedPercent(uint32_t percent) {
  if (percent < 1 || percent > 100) return InvalidArgument("speed must be 1 to 100 percent");
  speed_percent_ = percent;
  return Status::Ok();
}

Status SimBoard::InjectFault(const v1::SimFaultRequest& fault) {
  switch (fault.kind()) {
    case v1::SimFaultRequest::KILL_CORE:
      return KillCore(fault.x(), fault.y());
    case v1::SimFaultRequest::FAIL_BOARD:
      failed_ = true;
      return Status::Ok();
    case v1::SimFaultRequest::HEAL_BOARD:
      failed_ = false;
      speed_percent_ = 100;
      return Status::Ok();
    case v1::SimFaultRequest::SLOW_BOARD:
      return SetSpeedPercent(fault.speed_percent());
    default:
      return InvalidArgument("unknown fault kind " + std::to_string(fault.kind()));
  }
}

}  // namespace snn
