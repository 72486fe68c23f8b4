#include "master/services/token_service.h"

#include <glog/logging.h>

#include "common/base/duration.h"
#include "common/identity/pki.h"

namespace snn {

void TokenService::Register(MethodRouter& router) {
  using namespace std::placeholders;
  router.Add(rpc::kTokenCreate, std::bind(&TokenService::Create, this, _1, _2, _3));
  router.Add(rpc::kTokenList, std::bind(&TokenService::List, this, _1, _2, _3));
  router.Add(rpc::kTokenRevoke, std::bind(&TokenService::Revoke, this, _1, _2, _3));
}

void TokenService::Restore(const std::string& hash, v1::AccessTokenRecord token) {
  tokens_[hash] = std::move(token);
}

Result<v1::AccessTokenRecord> TokenService::Check(const std::string& token) const {
  auto it = tokens_.find(pki::Sha256Hex(token));
  if (it == tokens_.end()) {
    return Unauthenticated("the token is unknown or was revoked (snnctl token create makes one)");
  }
  if (it->second.expires_ms() <= clock_.NowMs()) {
    return Unauthenticated("token " + it->second.id() +
                           " has expired (snnctl token create makes a new one)");
  }
  return it->second;
}

void TokenService::DropExpired() {
  const int64_t now = clock_.NowMs();
  for (auto it = tokens_.begin(); it != tokens_.end();) {
    if (it->second.expires_ms() <= now) {
      journal_.DeleteAccessToken(it->first);
      it = tokens_.erase(it);
    } else {
      ++it;
    }
  }
}

void TokenService::Create(const CallContext& ctx, v1::TokenCreateRequest req,
                          Responder<v1::TokenCreateResponse> r) {
  if (!ctx.connection) {
    return r.Fail(ctx.Refuse(PermissionDenied(
        "a token cannot make tokens: run snnctl token create on a host where MUNGE proves "
        "who you are")));
  }
  const int64_t ttl_s =
      req.ttl_s() == 0 ? options_.default_ttl_s : static_cast<int64_t>(req.ttl_s());
  if (ttl_s < 60 || ttl_s > options_.max_ttl_s) {
    return r.Fail(InvalidArgument("a token lives 1m to " + FormatDurationUnit(options_.max_ttl_s) +
                                  ", not " + FormatDurationUnit(ttl_s)));
  }
  if (req.note().size() > 200) {
    return r.Fail(InvalidArgument("a token's note is at most 200 bytes"));
  }
  DropExpired();
  size_t mine = 0;
  for (const auto& [hash, token] : tokens_) mine += token.uid() == ctx.identity.uid ? 1 : 0;
  if (mine >= options_.max_per_user) {
    return r.Fail(Status(Code::kResourceExhausted,
                         "you have " + std::to_string(mine) +
                             " live tokens, the most one user may have; revoke some "
                             "(snnctl token list, snnctl token revoke ID)"));
  }
  if (tokens_.size() >= options_.max_total) {
    return r.Fail(Status(Code::kResourceExhausted,
                         std::to_string(tokens_.size()) + " tokens are live; wait for some"));
  }
  auto secret = pki::RandomHex(32);
  if (!secret.ok()) return r.Fail(secret.status());
  const std::string token = kTokenPrefix + *secret;
  const std::string hash = pki::Sha256Hex(token);
  v1::AccessTokenRecord record;
  record.set_id(hash.substr(0, 16));
  record.set_uid(ctx.identity.uid);
  record.set_gid(ctx.identity.gid);
  record.set_user(ctx.identity.user);
  record.set_created_ms(clock_.NowMs());
  record.set_expires_ms(record.created_ms() + ttl_s * 1000);
  record.set_note(req.note());
  tokens_[hash] = record;
  journal_.PutAccessToken(hash, record);
  LOG(INFO) << ctx.identity.Describe() << " created access token " << record.id() << " valid "
            << FormatDurationUnit(ttl_s);
  v1::TokenCreateResponse resp;
  resp.set_token(token);
  *resp.mutable_record() = std::move(record);
  journal_.Commit([r, resp] { r.Ok(resp); });
}

void TokenService::List(const CallContext& ctx, v1::TokenListRequest req,
                        Responder<v1::TokenListResponse> r) {
  const bool admin = ctx.identity.role >= Role::kAdmin;
  if (!req.user().empty() && !admin && req.user() != ctx.identity.user) {
    return r.Fail(ctx.Refuse(PermissionDenied("only an admin may list another user's tokens")));
  }
  const int64_t now = clock_.NowMs();
  v1::TokenListResponse resp;
  for (const auto& [hash, token] : tokens_) {
    if (token.expires_ms() <= now) continue;
    const bool wanted = req.user().empty() ? (admin || token.uid() == ctx.identity.uid)
                                           : token.user() == req.user();
    if (wanted) *resp.add_tokens() = token;
  }
  r.Ok(resp);
}

void TokenService::Revoke(const CallContext& ctx, v1::TokenRevokeRequest req,
                          Responder<v1::TokenRevokeResponse> r) {
  const bool admin = ctx.identity.role >= Role::kAdmin;
  for (auto it = tokens_.begin(); it != tokens_.end(); ++it) {
    if (it->second.id() != req.id()) continue;
    if (!admin && it->second.uid() != ctx.identity.uid) break;  // as if it did not exist
    v1::TokenRevokeResponse resp;
    *resp.mutable_record() = it->second;
    journal_.DeleteAccessToken(it->first);
    tokens_.erase(it);
    LOG(INFO) << ctx.identity.Describe() << " revoked access token " << req.id();
    journal_.Commit([r, resp] { r.Ok(resp); });
    return;
  }
  r.Fail(NotFound("you have no token with id '" + req.id().substr(0, 64) +
                  "' (snnctl token list shows yours)"));
}

}  // namespace snn
