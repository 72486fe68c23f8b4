#include "master/store/store.h"

namespace snn {

Result<StoreRecords> Store::LoadAll() {
  StoreRecords records;
  Status s = Scan("", "", [&](std::string_view key, std::string_view value) {
    records.emplace_back(std::string(key), std::string(value));
    return true;
  });
  if (!s.ok()) return s;
  return records;
}

}  // namespace snn
