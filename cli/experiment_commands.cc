#include "cli/experiment_commands.h"

#include <algorithm>
#include <charconv>
#include <iomanip>
#include <map>
#include <sstream>

#include "cli/job_control_commands.h"
#include "cli/model_import.h"
#include "cli/session.h"
#include "common/base/file_util.h"
#include "common/base/proto_json.h"
#include "common/rpc/service_refusals.h"

namespace snn {
namespace {

const char* StateWord(v1::ExperimentState state) {
  switch (state) {
    case v1::EXPERIMENT_QUEUED:
      return "QUEUED";
    case v1::EXPERIMENT_RUNNING:
      return "RUNNING";
    case v1::EXPERIMENT_DONE:
      return "DONE";
    case v1::EXPERIMENT_FAILED:
      return "FAILED";
    default:
      return "?";
  }
}

void PrintTable(const std::vector<v1::ExperimentRecord>& records, std::ostream& out) {
  out << std::left << std::setw(8) << "ID" << std::setw(16) << "NAME" << std::setw(9) << "STATE"
      << std::setw(12) << "BOARD_MS" << std::setw(9) << "OUTPUTS"
      << "BOARD / ERROR\n";
  for (const auto& r : records) {
    std::ostringstream ms;
    ms << std::fixed << std::setprecision(3) << static_cast<double>(r.board_us()) / 1000;
    out << std::left << std::setw(8) << r.id() << std::setw(16)
        << (r.spec().name().empty() ? "-" : r.spec().name()) << std::setw(9) << StateWord(r.state())
        << std::setw(12) << ms.str() << std::setw(9) << r.output_count()
        << (r.error().empty() ? r.board() : r.error()) << "\n";
  }
}

void PrintOutputs(const v1::ExperimentRecord& r, std::ostream& out) {
  out << std::left << std::setw(8) << "STEP" << std::setw(16) << "POPULATION"
      << "NEURON\n";
  for (const auto& s : r.outputs()) {
    out << std::left << std::setw(8) << s.step() << std::setw(16) << s.population() << s.neuron()
        << "\n";
  }
}

v1::ExperimentListRequest ListOf(const CliOptions& o, uint64_t service) {
  v1::ExperimentListRequest list;
  list.set_service_tenant(o.setting("service-tenant"));
  list.set_service(service);
  return list;
}

int Submit(const CliOptions& o, uint64_t service, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 5) {
    return Fail(err, InvalidArgument("usage: snnctl experiment submit SERVICE MODEL RUN.json "
                                     "[--count N] [--wait]"));
  }
  auto model = LoadModelOfJob(o.args[3], o.step_ms, o.setting("reset"));
  if (!model.ok()) return Fail(err, model.status());
  auto text = ReadWholeFile(o.args[4], "the run file");
  if (!text.ok()) return Fail(err, text.status());
  v1::ExperimentSpec spec;
  if (Status s = FromJson(*text, spec); !s.ok()) {
    return Fail(err, InvalidArgument(o.args[4] + ": " + s.message()));
  }
  if (spec.has_model()) {
    return Fail(err, InvalidArgument(o.args[4] + " names no model: the model is MODEL"));
  }
  *spec.mutable_model() = std::move(*model);
  uint32_t count = 1;
  if (std::string c = o.setting("count"); !c.empty()) {
    auto [p, ec] = std::from_chars(c.data(), c.data() + c.size(), count);
    if (ec != std::errc() || p != c.data() + c.size() || count < 1 || count > 1000) {
      return Fail(err, InvalidArgument("--count must be 1 to 1000"));
    }
  }
  v1::ExperimentSubmitRequest req;
  req.set_service_tenant(o.setting("service-tenant"));
  req.set_service(service);
  for (uint32_t i = 0; i < count; ++i) *req.add_experiments() = spec;
  Session session(o);
  if (Status s = session.Open(); !s.ok()) return Fail(err, s);
  auto queued = session.client().Call(rpc::kExperimentSubmit, req);
  // A service still pending holds no board and takes nothing yet: --wait waits for it here (the
  // master keeps nothing meanwhile).
  for (int64_t pause_ms = 50;
       o.wait && !queued.ok() && queued.status().code() == Code::kFailedPrecondition &&
       queued.status().message().find(kServiceHoldsNoBoard) != std::string::npos;
       pause_ms = std::min<int64_t>(pause_ms * 2, 1000)) {
    if (pause_ms == 50) err << "snnctl: " << queued.status().message() << ": waiting\n";
    CliClock().SleepMs(pause_ms);
    queued = session.client().Call(rpc::kExperimentSubmit, req);
  }
  if (!queued.ok()) return Fail(err, queued.status());
  const uint64_t first = queued->first_id(), last = first + queued->count() - 1;
  if (!o.wait) {
    out << "Queued experiment" << (first == last ? " " : "s ") << first
        << (first == last ? "" : "-" + std::to_string(last)) << " in service " << service << "\n";
    return 0;
  }
  v1::ExperimentListRequest list = ListOf(o, service);
  list.set_after_id(first - 1);
  list.set_finished_only(true);
  list.set_outputs(true);
  std::vector<v1::ExperimentRecord> done;
  int64_t pause_ms = 2;
  while (done.empty() || done.back().id() < last) {
    auto page = session.client().Call(rpc::kExperimentList, list);
    if (!page.ok()) return Fail(err, page.status());
    bool gap = false;
    for (const auto& r : page->experiments()) {
      if (r.id() > last) break;
      // Finished ones only: stop at the first one still waiting, so none is skipped.
      if (r.id() != list.after_id() + 1) gap = true;
      if (gap) break;
      done.push_back(r);
      list.set_after_id(r.id());
    }
    if (list.after_id() >= last) break;
    CliClock().SleepMs(pause_ms);
    pause_ms = std::min<int64_t>(pause_ms * 2, 200);
  }
  int failed = 0;
  for (const auto& r : done) {
    if (o.output == "json") {
      out << ToJson(r) << "\n";
      continue;
    }
    out << "experiment " << r.id() << ": " << StateWord(r.state()) << ", " << std::fixed
        << std::setprecision(3) << static_cast<double>(r.board_us()) / 1000
        << " ms of board time on " << r.board() << (r.error().empty() ? "" : ": " + r.error())
        << "\n";
    if (r.state() == v1::EXPERIMENT_DONE) PrintOutputs(r, out);
  }
  for (const auto& r : done) failed += r.state() != v1::EXPERIMENT_DONE;
  return failed == 0 ? 0 : 1;
}

}  // namespace

int Experiment(const CliOptions& o, std::ostream& out, std::ostream& err) {
  const std::string usage =
      "usage: snnctl experiment submit|list|results SERVICE ... (snnctl experiment --help)";
  if (o.args.size() < 3) return Fail(err, InvalidArgument(usage));
  auto service = ParseJobId(o.args[2]);
  if (!service.ok()) return Fail(err, service.status());
  const std::string& verb = o.args[1];
  if (verb == "submit") return Submit(o, *service, out, err);
  if (verb != "list" && verb != "results") return Fail(err, InvalidArgument(usage));
  v1::ExperimentListRequest list = ListOf(o, *service);
  uint64_t wanted = 0;
  if (verb == "results") {
    if (o.args.size() != 4) {
      return Fail(err, InvalidArgument("usage: snnctl experiment results SERVICE EXPERIMENT"));
    }
    auto id = ParseJobId(o.args[3]);
    if (!id.ok()) return Fail(err, id.status());
    wanted = *id;
    list.set_after_id(wanted - 1);
    list.set_limit(1);
    list.set_outputs(true);
  } else if (o.args.size() != 3) {
    return Fail(err, InvalidArgument("usage: snnctl experiment list SERVICE"));
  }
  Session session(o);
  if (Status s = session.Open(); !s.ok()) return Fail(err, s);
  std::vector<v1::ExperimentRecord> records;
  for (;;) {
    auto page = session.client().Call(rpc::kExperimentList, list);
    if (!page.ok()) return Fail(err, page.status());
    for (const auto& r : page->experiments()) records.push_back(r);
    if (verb == "results" || page->experiments().empty()) break;
    list.set_after_id(records.back().id());
  }
  if (verb == "results") {
    if (records.empty() || records[0].id() != wanted) {
      return Fail(err, NotFound("you have no experiment " + std::to_string(wanted) +
                                " in service " + std::to_string(*service)));
    }
    if (o.output == "json") {
      out << ToJson(records[0]) << "\n";
    } else if (!records[0].error().empty() || records[0].state() != v1::EXPERIMENT_DONE) {
      out << "experiment " << wanted << ": " << StateWord(records[0].state())
          << (records[0].error().empty() ? "" : ": " + records[0].error()) << "\n";
    } else {
      PrintOutputs(records[0], out);
    }
    return 0;
  }
  if (o.output == "json") {
    v1::ExperimentListResponse all;
    for (auto& r : records) *all.add_experiments() = std::move(r);
    out << ToJson(all) << "\n";
  } else {
    PrintTable(records, out);
  }
  return 0;
}

}  // namespace snn
