// Access tokens for the HTTP API (proto/access.proto): a user who proved their uid with MUNGE
// creates one (token.create), lists theirs (token.list) and revokes one (token.revoke); an admin
// lists and revokes anyone's. The HTTP server asks Check who a presented token stands for.
// Tokens are kept durably as their SHA-256 hashes: the store never holds a usable token.
// Thread contract: the master's io thread.
#pragma once

#include <map>
#include <string>

#include "common/base/clock.h"
#include "common/rpc/rpc_router.h"
#include "master/store/journal.h"
#include "proto/access.pb.h"

namespace snn {

struct TokenOptions {
  int64_t default_ttl_s = 7 * 86400;
  int64_t max_ttl_s = 90 * 86400;
  size_t max_per_user = 100;
  size_t max_total = 100000;
};

class TokenService {
 public:
  TokenService(Journal& journal, const Clock& clock, TokenOptions options = {})
      : journal_(journal), clock_(clock), options_(options) {}

  void Register(MethodRouter& router);
  // At recovery: a stored token (key without the prefix).
  void Restore(const std::string& hash, v1::AccessTokenRecord token);
  // The record `token` stands for, or Unauthenticated saying why not (unknown, revoked,
  // expired).
  Result<v1::AccessTokenRecord> Check(const std::string& token) const;

  static constexpr char kTokenPrefix[] = "snntok.";

 private:
  void Create(const CallContext& ctx, v1::TokenCreateRequest req,
              Responder<v1::TokenCreateResponse> r);
  void List(const CallContext& ctx, v1::TokenListRequest req, Responder<v1::TokenListResponse> r);
  void Revoke(const CallContext& ctx, v1::TokenRevokeRequest req,
              Responder<v1::TokenRevokeResponse> r);
  void DropExpired();

  Journal& journal_;
  const Clock& clock_;
  const TokenOptions options_;
  std::map<std::string, v1::AccessTokenRecord> tokens_;  // by hash
};

}  // namespace snn
