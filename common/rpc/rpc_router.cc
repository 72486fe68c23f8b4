#include "common/rpc/rpc_router.h"

#include <glog/logging.h>

#include <cctype>

namespace snn {

Status CallContext::Refuse(Status why) const {
  LOG(WARNING) << "refused " << method << " to " << identity.Describe() << " from "
               << (sink ? sink->peer() : "?") << ": " << why.message();
  return why;
}

void MethodRouter::Dispatch(const std::shared_ptr<ReplySink>& conn, v1::Envelope envelope,
                            Identity identity) const {
  auto it = handlers_.find(envelope.method());
  if (it == handlers_.end()) {
    std::string method = envelope.method().substr(0, 64);
    for (char& c : method) c = std::isprint(static_cast<unsigned char>(c)) ? c : '?';
    conn->Reply(envelope.id(), InvalidArgument("unknown method '" + method + "'"), nullptr);
    return;
  }
  if (Status s = Authorize(identity, it->second.needs, it->first); !s.ok()) {
    if (on_refused_) on_refused_(identity, it->first, s);
    if (observer_) observer_(it->first, s.code(), 0);
    conn->Reply(envelope.id(), s, nullptr);
    return;
  }
  it->second.call(conn, std::move(envelope), std::move(identity));
}

std::unordered_map<std::string, Right> MethodRouter::Methods() const {
  std::unordered_map<std::string, Right> out;
  for (const auto& [method, entry] : handlers_) out.emplace(method, entry.needs);
  return out;
}

}  // namespace snn
