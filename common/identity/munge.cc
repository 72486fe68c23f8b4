#include "common/identity/munge.h"

#include <munge.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace snn {
namespace {

struct ContextDeleter {
  void operator()(munge_ctx_t ctx) const { munge_ctx_destroy(ctx); }
};
using Context = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, ContextDeleter>;

Result<Context> NewContext(const std::string& socket) {
  Context ctx(munge_ctx_create());
  if (!ctx) return Internal("cannot create a MUNGE context (out of memory)");
  if (!socket.empty() &&
      munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS) {
    return InvalidArgument("bad MUNGE socket path '" + socket + "'");
  }
  return ctx;
}

std::string SocketName(const std::string& socket) {
  return socket.empty() ? "munged's default socket" : socket;
}

Status Explain(munge_err_t err, munge_ctx_t ctx, const std::string& socket);

}  // namespace

Status MungeError(int err, const std::string& socket) {
  return Explain(static_cast<munge_err_t>(err), nullptr, socket);
}

namespace {

Status Explain(munge_err_t err, munge_ctx_t ctx, const std::string& socket) {
  switch (err) {
    case EMUNGE_SOCKET:
      return Unavailable("cannot reach munged at " + SocketName(socket) +
                         ": is the munge service running (systemctl start munge)?");
    case EMUNGE_CRED_EXPIRED:
      return Unauthenticated(
          "the MUNGE credential has expired: the clocks of the client and the master differ by "
          "more than its lifetime (check NTP)");
    case EMUNGE_CRED_REWOUND:
      return Unauthenticated(
          "the MUNGE credential was made in the future: the client's clock is ahead of the "
          "master's (check NTP)");
    case EMUNGE_CRED_REPLAYED:
      return Unauthenticated("the MUNGE credential was used before (replayed); refused");
    case EMUNGE_CRED_INVALID:
    case EMUNGE_BAD_CRED:
    case EMUNGE_BAD_VERSION:
    case EMUNGE_BAD_CIPHER:
    case EMUNGE_BAD_MAC:
    case EMUNGE_BAD_ZIP:
    case EMUNGE_BAD_REALM:
    case EMUNGE_CRED_UNAUTHORIZED:
      return Unauthenticated(
          "the MUNGE credential is not valid (forged, or made with another munge key): " +
          std::string(munge_strerror(err)));
    default:
      break;
  }
  const char* detail = ctx != nullptr ? munge_ctx_strerror(ctx) : nullptr;
  return Unavailable(std::string("MUNGE failed: ") + (detail ? detail : munge_strerror(err)));
}

// What every snn credential carries, and what the master requires: a credential another service
// made with the same key (Slurm's, or `munge` run by hand) names a uid too, but was not made for
// snn, and is refused.
constexpr char kPurpose[] = "snn-credential/1";

}  // namespace

Result<std::string> MungeEncode(const std::string& socket) {
  auto ctx = NewContext(socket);
  if (!ctx.ok()) return ctx.status();
  char* cred = nullptr;
  const munge_err_t err = munge_encode(&cred, ctx->get(), kPurpose, sizeof kPurpose - 1);
  if (err != EMUNGE_SUCCESS) {
    std::free(cred);
    return Explain(err, ctx->get(), socket);
  }
  std::string out(cred);
  std::free(cred);
  return out;
}

Result<MungeIdentity> MungeDecode(const std::string& socket, const std::string& credential) {
  if (credential.empty() || credential.size() > 4096 ||
      credential.find('\0') != std::string::npos) {
    return Unauthenticated("the request carries no usable MUNGE credential");
  }
  auto ctx = NewContext(socket);
  if (!ctx.ok()) return ctx.status();
  void* payload = nullptr;
  int length = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  const munge_err_t err =
      munge_decode(credential.c_str(), ctx->get(), &payload, &length, &uid, &gid);
  const bool for_snn = payload != nullptr && length == int(sizeof kPurpose - 1) &&
                       std::memcmp(payload, kPurpose, sizeof kPurpose - 1) == 0;
  std::free(payload);
  if (err != EMUNGE_SUCCESS) return Explain(err, ctx->get(), socket);
  if (!for_snn) {
    return Unauthenticated(
        "the MUNGE credential was not made for snn (another service's, sharing the munge key)");
  }
  MungeIdentity id;
  id.uid = uid;
  id.gid = gid;
  time_t encoded = 0;
  int ttl = 0;
  munge_ctx_get(ctx->get(), MUNGE_OPT_ENCODE_TIME, &encoded);
  munge_ctx_get(ctx->get(), MUNGE_OPT_TTL, &ttl);
  id.expires_s = static_cast<int64_t>(encoded) + ttl;
  return id;
}

}  // namespace snn
