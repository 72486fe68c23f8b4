#include "cli/token_commands.h"

#include "cli/format.h"
#include "cli/secret_output.h"
#include "cli/session.h"
#include "common/base/duration.h"
#include "common/rpc/rpc_client.h"
#include "proto/access.pb.h"

namespace snn {

int TokenCreate(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2) {
    return Fail(err, InvalidArgument(
                         "usage: snnctl token create [--ttl DURATION] [--note TEXT] [--out FILE]"));
  }
  v1::TokenCreateRequest req;
  if (!o.ttl.empty()) {
    auto ttl = ParseDurationSeconds(o.ttl);
    if (!ttl.ok()) return Fail(err, InvalidArgument("--ttl: " + ttl.status().message()));
    req.set_ttl_s(*ttl);
  }
  req.set_note(o.note);
  auto resp = Call(o, rpc::kTokenCreate, req);
  if (!resp.ok()) return Fail(err, resp.status());
  // The token alone on standard output (`snnctl token create > FILE`), or in --out's file (then
  // not on standard output); the rest on standard error.
  if (!o.out_dir.empty()) {
    if (Status s = WritePrivateFile(o.out_dir, resp->token() + "\n"); !s.ok()) return Fail(err, s);
    resp->clear_token();
  } else {
    NarrowRedirectedOutput(err);
  }
  if (o.output == "json") {
    out << FormatJson(*resp) << "\n";
    return 0;
  }
  if (o.out_dir.empty()) out << resp->token() << "\n";
  if (!o.parsable) {
    err << "Token " << resp->record().id() << " acts as " << resp->record().user() << " until "
        << FormatTimestamp(resp->record().expires_ms())
        << "; send it as 'Authorization: Bearer TOKEN'. It is "
        << (o.out_dir.empty() ? "shown only now" : "in " + o.out_dir + " (mode 0600)") << ".\n";
  }
  return 0;
}

int TokenList(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2)
    return Fail(err, InvalidArgument("usage: snnctl token list [--user NAME]"));
  v1::TokenListRequest req;
  req.set_user(o.job_user);
  auto resp = Call(o, rpc::kTokenList, req);
  if (!resp.ok()) return Fail(err, resp.status());
  if (o.output == "json") {
    out << FormatJson(*resp) << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {{"ID", "USER", "CREATED", "EXPIRES", "NOTE"}};
  for (const auto& t : resp->tokens()) {
    rows.push_back({t.id(), t.user(), FormatTimestamp(t.created_ms()),
                    FormatTimestamp(t.expires_ms()), t.note()});
  }
  out << FormatTable(rows);
  return 0;
}

int TokenRevoke(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 3) return Fail(err, InvalidArgument("usage: snnctl token revoke ID"));
  v1::TokenRevokeRequest req;
  req.set_id(o.args[2]);
  auto resp = Call(o, rpc::kTokenRevoke, req);
  if (!resp.ok()) return Fail(err, resp.status());
  if (o.output == "json") {
    out << FormatJson(*resp) << "\n";
  } else {
    out << "Revoked token " << resp->record().id() << " of " << resp->record().user() << "\n";
  }
  return 0;
}

}  // namespace snn
