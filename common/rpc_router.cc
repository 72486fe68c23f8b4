#include "common/rpc_router.h"

namespace snn {

void MethodRouter::Dispatch(const std::shared_ptr<Connection>& conn, v1::Envelope envelope) const {
  auto it = handlers_.find(envelope.method());
  if (it == handlers_.end()) {
    conn->Reply(envelope.id(), InvalidArgument("unknown method '" + envelope.method() + "'"),
                nullptr);
    return;
  }
  it->second(conn, std::move(envelope));
}

}  // namespace snn
