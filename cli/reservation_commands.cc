#include "cli/reservation_commands.h"

#include <charconv>

#include "cli/format.h"
#include "cli/node_commands.h"
#include "cli/session.h"
#include "common/base/clock.h"
#include "common/base/duration.h"
#include "common/base/split.h"
#include "common/base/utc_time.h"
#include "common/rpc/rpc_client.h"
#include "proto/reservation.pb.h"

namespace snn {
namespace {

// The fields of `reservation create` from its options, checked here: nothing is sent until
// every one reads.
Result<v1::Reservation> ReservationFromOptions(const CliOptions& o) {
  v1::Reservation r;
  r.set_name(o.args[2]);
  const std::string start = o.setting("start");
  const std::string duration = o.setting("duration");
  if (start.empty() || duration.empty()) {
    return InvalidArgument("reservation create needs --start TIME and --duration DURATION");
  }
  auto when = ParseUtcTime(start, SystemClock().NowMs());
  if (!when.ok()) return InvalidArgument("--start: " + when.status().message());
  r.set_start_ms(*when);
  auto length = ParseDurationSeconds(duration);
  if (!length.ok()) return InvalidArgument("--duration: " + length.status().message());
  r.set_duration_ms(static_cast<int64_t>(*length) * 1000);
  const std::string boards = o.setting("boards");
  const std::string count = o.setting("count");
  if (boards.empty() == count.empty()) {
    return InvalidArgument("reservation create needs --boards NODE/BOARD[,...] or --count N");
  }
  for (const std::string& b : SplitList(boards)) {
    v1::BoardRef* ref = r.add_boards();
    uint32_t index = 0;
    if (!ParseBoardRef(b, *ref->mutable_node(), index)) {
      return InvalidArgument("--boards: '" + b + "' is not NODE/BOARD (node1/0)");
    }
    ref->set_board(index);
  }
  if (!count.empty()) {
    uint32_t n = 0;
    auto [p, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (ec != std::errc() || p != count.data() + count.size() || n < 1 || n > 100000) {
      return InvalidArgument("--count must be a number of boards from 1 to 100000");
    }
    r.set_count(n);
  }
  r.set_pool(o.setting("pool"));
  for (std::string& t : SplitList(o.setting("tenants"))) r.add_tenants(std::move(t));
  for (const std::string& flag : SplitList(o.setting("flags"))) {
    if (flag == "maint") {
      r.set_maint(true);
    } else if (flag == "daily") {
      r.set_daily(true);
    } else if (flag == "flex") {
      r.set_flex(true);
    } else if (flag == "ignore_jobs") {
      r.set_ignore_jobs(true);
    } else {
      return InvalidArgument("--flags: '" + flag + "' is not maint, daily, flex or ignore_jobs");
    }
  }
  return r;
}

std::string FlagsOf(const v1::Reservation& r) {
  std::string flags;
  auto add = [&](bool on, const char* name) {
    if (on) flags += (flags.empty() ? "" : ",") + std::string(name);
  };
  add(r.maint(), "maint");
  add(r.daily(), "daily");
  add(r.flex(), "flex");
  add(r.ignore_jobs(), "ignore_jobs");
  return flags.empty() ? "-" : flags;
}

std::string BoardsOf(const v1::Reservation& r) {
  std::string boards;
  for (const auto& b : r.boards()) {
    boards += (boards.empty() ? "" : ",") + b.node() + "/" + std::to_string(b.board());
  }
  return boards;
}

std::string TenantsOf(const v1::Reservation& r) {
  std::string tenants;
  for (const auto& t : r.tenants()) tenants += (tenants.empty() ? "" : ",") + t;
  return tenants.empty() ? "-" : tenants;
}

}  // namespace

int ReservationCreate(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 3) {
    return Fail(err, InvalidArgument(
                         "usage: snnctl reservation create NAME --start TIME --duration DURATION "
                         "--boards NODE/BOARD[,...]|--count N [--pool P] [--tenants T1,T2] "
                         "[--flags maint,daily,flex,ignore_jobs]"));
  }
  auto asked = ReservationFromOptions(o);
  if (!asked.ok()) return Fail(err, asked.status());
  v1::ReservationCreateRequest req;
  *req.mutable_reservation() = std::move(*asked);
  auto resp = Call(o, rpc::kReservationCreate, req);
  if (!resp.ok()) return Fail(err, resp.status());
  if (o.output == "json") {
    out << FormatJson(*resp) << "\n";
    return 0;
  }
  const v1::Reservation& r = resp->reservation();
  out << "Reservation " << r.name() << ": " << FormatUtcTime(r.start_ms()) << " for "
      << FormatDurationUnit(static_cast<uint64_t>(r.duration_ms() / 1000))
      << (r.daily() ? ", daily" : "") << ", boards " << BoardsOf(r) << "\n";
  return 0;
}

int ReservationList(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2) return Fail(err, InvalidArgument("usage: snnctl reservation list"));
  auto resp = Call(o, rpc::kReservationList, v1::ReservationListRequest());
  if (!resp.ok()) return Fail(err, resp.status());
  if (o.output == "json") {
    out << FormatJson(*resp) << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "STATE", "START", "DURATION", "POOL", "BOARDS", "TENANTS", "FLAGS"}};
  for (const auto& r : resp->reservations()) {
    const int64_t now = resp->now_ms();
    const int64_t period = r.daily() ? 24 * 3600 * 1000LL : 0;
    int64_t start = r.start_ms();
    if (period > 0 && start + r.duration_ms() <= now) {
      start += ((now - start - r.duration_ms()) / period + 1) * period;  // the next occurrence
    }
    const bool active = start <= now && now < start + r.duration_ms();
    rows.push_back({r.name(), active ? "ACTIVE" : "WAITING", FormatUtcTime(start),
                    FormatDurationUnit(static_cast<uint64_t>(r.duration_ms() / 1000)), r.pool(),
                    BoardsOf(r), TenantsOf(r), FlagsOf(r)});
  }
  out << FormatTable(rows);
  return 0;
}

int ReservationDelete(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 3)
    return Fail(err, InvalidArgument("usage: snnctl reservation delete NAME"));
  v1::ReservationDeleteRequest req;
  req.set_name(o.args[2]);
  auto resp = Call(o, rpc::kReservationDelete, req);
  if (!resp.ok()) return Fail(err, resp.status());
  out << "Deleted reservation " << o.args[2] << "\n";
  return 0;
}

}  // namespace snn
