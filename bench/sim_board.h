// The board the load tools give their nodes: a 16x16 sim-v1 board of 4,000 KSPS and 64 streams,
// at full health.
#pragma once

#include <cstdint>

#include "proto/node.pb.h"

namespace snn::bench {

inline v1::BoardInfo* AddSimBoard(v1::NodeRecord& node, uint32_t index) {
  auto* board = node.add_boards();
  board->set_index(index);
  board->set_type("sim-v1");
  board->set_width(16);
  board->set_height(16);
  board->set_ksps(4000);
  board->set_streams(64);
  board->set_health(100);
  return board;
}

}  // namespace snn::bench
