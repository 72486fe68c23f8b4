// MUNGE credentials (libmunge), as Slurm uses them: a client asks its local munged for a
// credential that names its uid and gid; the master asks its munged to decode it. munged keeps
// a replay cache, so a credential decodes once; it refuses one that is expired or made in the
// future (clock skew). Every error is one line that says what to check.
// Thread-safe: each call uses its own munge context.
#pragma once

#include <cstdint>
#include <string>

#include "common/base/status.h"

namespace snn {

// A new credential for the calling process's uid and gid. `socket` empty: munged's default.
Result<std::string> MungeEncode(const std::string& socket);

struct MungeIdentity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t expires_s = 0;  // Unix seconds: encode time plus time-to-live
};
// The one-line status for a libmunge error code (munge_err_t), as users see it.
Status MungeError(int err, const std::string& socket);

// Decodes (and so uses up) a credential.
Result<MungeIdentity> MungeDecode(const std::string& socket, const std::string& credential);

}  // namespace snn
