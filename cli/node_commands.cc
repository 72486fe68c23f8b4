#include "cli/node_commands.h"

#include <algorithm>
#include <map>
#include <set>

#include "cli/accounting_commands.h"
#include "cli/billing_commands.h"
#include "cli/format.h"
#include "cli/job_columns.h"
#include "cli/job_control_commands.h"
#include "cli/policy_commands.h"
#include "cli/secret_output.h"
#include "cli/session.h"
#include "cli/time_arg.h"
#include "common/base/clock.h"
#include "common/base/duration.h"
#include "common/base/job_validation.h"
#include "common/base/split.h"
#include "common/daemon/board_config.h"
#include "common/daemon/job_file.h"
#include "common/model/model.h"
#include "common/rpc/rpc_client.h"
#include "proto/node.pb.h"
#include "proto/policy.pb.h"

namespace snn {
// "node1/2", or "node1/board2" as reasons and job details print it: the node and the board.
bool ParseBoardRef(const std::string& text, std::string& node, uint32_t& board) {
  const size_t slash = text.rfind('/');
  if (slash == std::string::npos || slash == 0) return false;
  std::string index = text.substr(slash + 1);
  if (index.rfind("board", 0) == 0) index = index.substr(5);
  if (index.empty() || index.size() > 9 ||
      !std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  node = text.substr(0, slash);
  board = static_cast<uint32_t>(std::stoul(index));
  return true;
}

int Pool(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2 || o.args[1] != "status") {
    return Fail(err, InvalidArgument("usage: snnctl pool status"));
  }
  auto resp = Call(o, rpc::kPoolStatus, v1::PoolStatusRequest());
  if (!resp.ok()) return Fail(err, resp.status());
  out << (o.output == "json" ? FormatJson(*resp) + "\n" : FormatPoolStatus(*resp));
  return 0;
}

int NodeToken(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 3) {
    return Fail(
        err, InvalidArgument(
                 "usage: snnctl node token NODE [--boards FILE [--pools P1,P2]] [--ttl DURATION]"));
  }
  v1::NodeTokenRequest req;
  req.set_node(o.args[2]);
  // The inventory approved with the token (as node add), if given.
  if (auto boards_file = o.settings.find("boards"); boards_file != o.settings.end()) {
    auto boards = LoadBoardsFile(boards_file->second);
    if (!boards.ok()) return Fail(err, boards.status());
    for (const auto& b : boards->boards) *req.add_boards() = b;
    if (auto pools = o.settings.find("pools"); pools != o.settings.end()) {
      for (const std::string& pool : SplitList(pools->second)) req.add_pools(pool);
    }
  } else if (o.settings.count("pools")) {
    return Fail(err, InvalidArgument("--pools goes with --boards"));
  }
  if (!o.ttl.empty()) {
    auto ttl = ParseDurationSeconds(o.ttl);
    if (!ttl.ok()) return Fail(err, InvalidArgument("--ttl: " + ttl.status().message()));
    req.set_ttl_s(*ttl);
  }
  auto resp = Call(o, rpc::kNodeToken, req);
  if (!resp.ok()) return Fail(err, resp.status());
  // The token alone on standard output, so that `snnctl node token N > FILE` makes the file the
  // agent reads (narrowed to 0600: it enrols a node); the hint goes to standard error.
  NarrowRedirectedOutput(err);
  out << resp->token() << "\n";
  if (!o.parsable) {
    err << "One enrolment of node " << o.args[2] << ", until "
        << FormatTimestamp(resp->expires_ms()) << ": snn-agent --node_name=" << o.args[2]
        << " --join_token_file=FILE (the file holding the token)\n";
  }
  return 0;
}

int NodeAdd(const CliOptions& o, std::ostream& out, std::ostream& err) {
  auto boards_file = o.settings.find("boards");
  if (o.args.size() != 3 || boards_file == o.settings.end()) {
    return Fail(err, InvalidArgument("usage: snnctl node add NODE --boards FILE [--pools P1,P2]"));
  }
  auto boards = LoadBoardsFile(boards_file->second);
  if (!boards.ok()) return Fail(err, boards.status());
  v1::NodeAddRequest req;
  req.set_node(o.args[2]);
  for (const auto& b : boards->boards) *req.add_boards() = b;
  if (auto pools = o.settings.find("pools"); pools != o.settings.end()) {
    for (const std::string& pool : SplitList(pools->second)) req.add_pools(pool);
  }
  auto resp = Call(o, rpc::kNodeAdd, req);
  if (!resp.ok()) return Fail(err, resp.status());
  if (o.output == "json") {
    out << FormatJson(*resp) << "\n";
    return 0;
  }
  out << "Node " << o.args[2] << " may declare " << req.boards_size() << " boards:\n";
  for (const auto& b : resp->approval().boards()) {
    out << "  board " << b.index() << ": " << b.type() << " " << b.width() << "x" << b.height()
        << ", " << b.ksps() << " KSPS, " << b.streams() << " streams\n";
  }
  std::string pools;
  for (const auto& p : resp->approval().pools()) pools += (pools.empty() ? "" : ", ") + p;
  out << "  pools: " << (pools.empty() ? "any" : pools) << "\n";
  return 0;
}

int NodeRevoke(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 3) return Fail(err, InvalidArgument("usage: snnctl node revoke NODE"));
  v1::NodeRevokeRequest req;
  req.set_node(o.args[2]);
  auto resp = Call(o, rpc::kNodeRevoke, req);
  if (!resp.ok()) return Fail(err, resp.status());
  out << "Revoked every certificate of node " << o.args[2]
      << "; it enrols again with a new join token (snnctl node token " << o.args[2] << ")\n";
  return 0;
}

// Waits until every named node is registered and UP, asking the master every half second
// (an enrolling agent, a node just restarted); a master not reachable yet is asked again.
int NodeWait(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() < 3) {
    return Fail(err, InvalidArgument("usage: snnctl node wait NODE... [--within DURATION]"));
  }
  int64_t within_s = 120;
  if (!o.within.empty()) {
    auto parsed = ParseDurationSeconds(o.within);
    if (!parsed.ok()) return Fail(err, InvalidArgument("--within: " + parsed.status().message()));
    within_s = *parsed;
  }
  const std::vector<std::string> names(o.args.begin() + 2, o.args.end());
  const int64_t give_up_ms = CliClock().NowMs() + within_s * 1000;
  std::string last;
  while (true) {
    auto resp = Call(o, rpc::kPoolStatus, v1::PoolStatusRequest());
    if (!resp.ok() && resp.status().code() != Code::kUnavailable &&
        resp.status().code() != Code::kDeadlineExceeded) {
      return Fail(err, resp.status());
    }
    std::vector<std::string> not_up;
    for (const std::string& name : names) {
      std::string state = "not registered";
      if (resp.ok()) {
        for (const auto& node : resp->nodes()) {
          if (node.name() == name) state = node.state();
        }
      }
      if (state != "UP") not_up.push_back(name + " (" + state + ")");
    }
    if (!resp.ok()) last = resp.status().message();
    if (resp.ok() && not_up.empty()) {
      for (const std::string& name : names) out << "Node " << name << " is UP\n";
      return 0;
    }
    if (CliClock().NowMs() >= give_up_ms) {
      std::string which;
      for (const std::string& n : not_up) which += (which.empty() ? "" : ", ") + n;
      return Fail(err,
                  DeadlineExceeded("after " + std::to_string(within_s) + " s, not UP: " + which +
                                   (resp.ok() ? "; see the agent's log (journalctl -u snn-agent)"
                                              : "; the master: " + last)));
    }
    CliClock().SleepMs(500);
  }
}

int Drain(const CliOptions& o, std::ostream& out, std::ostream& err) {
  const bool board = o.args[0] == "board";
  const Status usage =
      InvalidArgument(board ? "usage: snnctl board drain|resume NODE/BOARD [--reason TEXT]"
                            : "usage: snnctl node drain|resume NODE [--reason TEXT]");
  if (o.args.size() != 3 || (o.args[1] != "drain" && o.args[1] != "resume")) {
    return Fail(err, usage);
  }
  v1::DrainRequest req;
  req.set_drain(o.args[1] == "drain");
  req.set_reason(o.reason);
  req.set_board(-1);
  std::string target = o.args[2];
  if (board) {
    uint32_t index = 0;
    if (!ParseBoardRef(o.args[2], target, index)) return Fail(err, usage);
    req.set_board(static_cast<int32_t>(index));
  }
  req.set_node(target);
  auto resp = Call(o, rpc::kDrain, req);
  if (!resp.ok()) return Fail(err, resp.status());
  out << (board ? "Board " : "Node ") << o.args[2]
      << (req.drain() ? " drained: no new work; running jobs finish" : " resumed") << "\n";
  return 0;
}

int Sim(const CliOptions& o, std::ostream& out, std::ostream& err) {
  const Status usage = InvalidArgument(
      "usage: snnctl sim kill-core NODE/BOARD X,Y | sim fail-board NODE/BOARD | "
      "sim slow-board NODE/BOARD PERCENT | sim heal-board NODE/BOARD");
  if (o.args.size() < 3) return Fail(err, usage);
  v1::SimFaultRequest req;
  const std::string& what = o.args[1];
  if (what == "kill-core" && o.args.size() == 4) {
    req.set_kind(v1::SimFaultRequest::KILL_CORE);
  } else if (what == "fail-board" && o.args.size() == 3) {
    req.set_kind(v1::SimFaultRequest::FAIL_BOARD);
  } else if (what == "heal-board" && o.args.size() == 3) {
    req.set_kind(v1::SimFaultRequest::HEAL_BOARD);
  } else if (what == "slow-board" && o.args.size() == 4) {
    req.set_kind(v1::SimFaultRequest::SLOW_BOARD);
    unsigned percent = 0;
    char extra = 0;
    if (sscanf(o.args[3].c_str(), "%u%c", &percent, &extra) != 1) return Fail(err, usage);
    req.set_speed_percent(percent);
  } else {
    return Fail(err, usage);
  }
  std::string node;
  uint32_t board = 0;
  unsigned x = 0, y = 0;
  char comma = 0, extra = 0;
  if (!ParseBoardRef(o.args[2], node, board)) return Fail(err, usage);
  if (req.kind() == v1::SimFaultRequest::KILL_CORE &&
      (sscanf(o.args[3].c_str(), "%u%c%u%c", &x, &comma, &y, &extra) != 3 || comma != ',')) {
    return Fail(err, usage);
  }
  req.set_node(node);
  req.set_board(board);
  req.set_x(x);
  req.set_y(y);
  auto resp = Call(o, rpc::kSimFault, req);
  if (!resp.ok()) return Fail(err, resp.status());
  out << resp->outcome() << "\n";
  return 0;
}

int BoardMark(const CliOptions& o, std::ostream& out, std::ostream& err) {
  const bool mark = o.args[1] == "mark";
  const Status usage = InvalidArgument(mark ? "usage: snnctl board mark NODE/BOARD NAME=VALUE..."
                                            : "usage: snnctl board unmark NODE/BOARD NAME...");
  v1::BoardMarkRequest req;
  std::string node;
  uint32_t board = 0;
  if (o.args.size() < 4 || !ParseBoardRef(o.args[2], node, board)) return Fail(err, usage);
  req.set_node(node);
  req.set_board(board);
  for (size_t i = 3; i < o.args.size(); ++i) {
    const std::string& arg = o.args[i];
    if (!mark) {
      req.add_unset(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      return Fail(err, InvalidArgument("'" + arg.substr(0, 64) + "' is not NAME=VALUE"));
    }
    const std::string name = arg.substr(0, eq);
    if (req.set().count(name) > 0) {
      return Fail(err, InvalidArgument("attribute '" + name.substr(0, 64) + "' is given twice"));
    }
    (*req.mutable_set())[name] = arg.substr(eq + 1);
  }
  auto resp = Call(o, rpc::kBoardMark, req);
  if (!resp.ok()) return Fail(err, resp.status());
  std::map<std::string, std::string> marks(resp->marks().begin(), resp->marks().end());
  std::string shown;
  for (const auto& [name, value] : marks) shown += (shown.empty() ? "" : ",") + name + "=" + value;
  out << "Board " << node << "/" << board << " marks: " << (shown.empty() ? "none" : shown) << "\n";
  return 0;
}

}  // namespace snn
