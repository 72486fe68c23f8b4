// Words of a refusal that a client acts on, written once for the master that says them and the
// client that reads them.
#pragma once

namespace snn {

// experiment.submit to a service that is still pending (it holds no board, and the master keeps
// nothing for it): `snnctl experiment submit --wait` waits for it to run and sends again.
inline constexpr char kServiceHoldsNoBoard[] = "holds no board yet";

// A node's registration refused because its certificate was revoked: the agent sets the
// certificate aside and enrols again with a join token.
inline constexpr char kCertificateRevoked[] = "was revoked";

}  // namespace snn
