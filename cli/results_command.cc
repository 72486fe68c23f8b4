#include "cli/results_command.h"

#include <filesystem>
#include <fstream>

#include "cli/format.h"
#include "cli/job_control_commands.h"
#include "cli/session.h"
#include "common/base/proto_json.h"
#include "common/base/split.h"
#include "common/rpc/rpc_methods.h"

namespace snn {
namespace {

// A result's name as the master gave it, made safe to use under DIR: relative, no "." or "..".
bool SafeName(const std::string& name) {
  if (name.empty() || name.front() == '/') return false;
  for (const std::string& part : SplitList(name, '/', /*keep_empty=*/true)) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

// Fetches `file` into `path`, a slice at a time, up to its size when the first slice came.
Status Fetch(RpcClient& client, v1::JobResultsRequest req, const std::string& path,
             uint64_t* bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return Internal("cannot write " + path);
  req.set_offset(0);
  for (;;) {
    auto resp = client.Call(rpc::kJobResults, req);
    if (!resp.ok()) return resp.status();
    file << resp->data();
    *bytes += resp->data().size();
    req.set_offset(req.offset() + resp->data().size());
    if (resp->data().empty() || req.offset() >= resp->size()) break;
  }
  file.close();
  if (!file) return Internal("cannot write " + path);
  return Status::Ok();
}

std::string Describe(const v1::Provenance& p) {
  return "Job " + std::to_string(p.tenant_job_id()) + " task " + std::to_string(p.task()) +
         " (attempt " + std::to_string(p.attempt()) + ") on " + p.node() + "/" +
         std::to_string(p.board()) + (p.board_type().empty() ? "" : " (" + p.board_type() + ")") +
         ", " + StateName(p.state());
}

}  // namespace

int Results(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2) {
    return Fail(err, InvalidArgument("usage: snnctl results JOBID [--task N] [--out DIR]"));
  }
  auto ref = ParseJobRef(o.args[1]);  // or an array's element, 7_5
  if (!ref.ok()) return Fail(err, ref.status());
  v1::JobResultsRequest req;
  *req.mutable_job() = *ref;
  req.set_task(o.task);
  Session session(o);
  if (Status s = session.Open(); !s.ok()) return Fail(err, s);
  auto list = session.client().Call(rpc::kJobResults, req);
  if (!list.ok()) return Fail(err, list.status());
  if (o.out_dir.empty()) {
    if (o.output == "json") {
      out << FormatJson(*list) << "\n";
      return 0;
    }
    out << Describe(list->provenance()) << "\n";
    if (const v1::Provenance& p = list->provenance(); !p.model_sha256().empty()) {
      out << "Model " << (p.model().empty() ? "(unnamed)" : p.model()) << " (" << p.model_dynamics()
          << ", step " << p.model_step_ms() << " ms), sha256 " << p.model_sha256() << "\n";
    }
    if (list->files().empty()) {
      out << "No results: the task wrote nothing to $SNN_OUTPUT_DIR.\n";
      return 0;
    }
    std::vector<std::vector<std::string>> rows = {{"FILE", "BYTES", "MODIFIED"}};
    for (const auto& f : list->files()) {
      rows.push_back({f.name(), std::to_string(f.size()), FormatTimestamp(f.mtime_ms())});
    }
    out << FormatTable(rows);
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return Fail(err, InvalidArgument("cannot create " + o.out_dir + ": " + ec.message()));
  uint64_t bytes = 0;
  for (const auto& f : list->files()) {
    if (!SafeName(f.name())) {
      return Fail(err, Internal("the master named a result '" + f.name().substr(0, 100) +
                                "', which is no path under " + o.out_dir));
    }
    const std::filesystem::path path = std::filesystem::path(o.out_dir) / f.name();
    std::filesystem::create_directories(path.parent_path(), ec);
    v1::JobResultsRequest ask = req;
    ask.set_file(f.name());
    if (Status s = Fetch(session.client(), ask, path.string(), &bytes); !s.ok()) {
      return Fail(err, s);
    }
  }
  std::ofstream(o.out_dir + "/provenance.json") << ToJson(list->provenance()) << "\n";
  out << "Wrote " << list->files_size() << (list->files_size() == 1 ? " file (" : " files (")
      << bytes << " bytes) and provenance.json to " << o.out_dir << "\n";
  if (list->provenance().state() == v1::RUNNING) {
    out << "The job is still running: its results may still change.\n";
  }
  return 0;
}

}  // namespace snn
