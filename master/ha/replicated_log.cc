#include "master/ha/replicated_log.h"

#include <cstdio>

#include "master/store/journal.h"

namespace snn {

std::string LogPrefix(const std::string& prefix) { return prefix + "log/"; }

std::string LogSeqKey(const std::string& prefix, uint64_t seq) {
  return LogPrefix(prefix) + Hex16(seq) + "/";
}

std::string LogChunkKey(const std::string& prefix, uint64_t seq, int64_t epoch, uint32_t part) {
  char part_hex[9];
  snprintf(part_hex, sizeof part_hex, "%08x", part);
  return LogSeqKey(prefix, seq) + Hex16(static_cast<uint64_t>(epoch)) + "/" + part_hex;
}

std::string AppliedKey(const std::string& prefix, const std::string& member) {
  return prefix + "applied/" + member;
}

std::string LogFloorKey(const std::string& prefix) { return prefix + "log_floor"; }

etcdserverpb::TxnRequest FencedTxn(const std::string& key, int64_t revision) {
  etcdserverpb::TxnRequest txn;
  auto* fence = txn.add_compare();
  fence->set_key(key);
  fence->set_target(etcdserverpb::Compare::CREATE);
  fence->set_result(etcdserverpb::Compare::EQUAL);
  fence->set_create_revision(revision);
  return txn;
}

std::string LeaderElectionName(const std::string& prefix) { return prefix + "leader"; }

std::vector<std::pair<std::string, std::string>> EncodeBatch(const std::string& prefix,
                                                             const StoreBatch& batch, uint64_t seq,
                                                             int64_t epoch,
                                                             size_t max_chunk_bytes) {
  v1::HaBatch message;
  for (const auto& write : batch) {
    auto* w = message.add_writes();
    w->set_key(write.key);
    if (write.value) {
      w->set_value(*write.value);
    } else {
      w->set_erase(true);
    }
  }
  const std::string data = message.SerializeAsString();
  std::vector<std::pair<std::string, std::string>> chunks;
  size_t offset = 0;
  uint32_t part = 0;
  do {
    const size_t n = std::min(max_chunk_bytes, data.size() - offset);
    v1::HaChunk chunk;
    chunk.set_seq(seq);
    chunk.set_epoch(epoch);
    chunk.set_part(part);
    chunk.set_data(data.substr(offset, n));
    offset += n;
    chunk.set_last(offset == data.size());
    chunks.emplace_back(LogChunkKey(prefix, seq, epoch, part), chunk.SerializeAsString());
    ++part;
  } while (offset < data.size());
  return chunks;
}

Result<std::optional<LogAssembler::Batch>> LogAssembler::Feed(const std::string& value) {
  v1::HaChunk chunk;
  if (!chunk.ParseFromString(value)) return Internal("corrupt chunk in the replicated log");
  const bool continues =
      open_ && chunk.seq() == seq_ && chunk.epoch() == epoch_ && chunk.part() == next_part_;
  if (!continues) {
    open_ = false;
    data_.clear();
    // A chunk in the middle of a batch whose start this reader never saw: nothing to build on.
    if (chunk.part() != 0) return std::optional<Batch>();
    open_ = true;
    seq_ = chunk.seq();
    epoch_ = chunk.epoch();
  }
  data_ += chunk.data();
  next_part_ = chunk.part() + 1;
  if (!chunk.last()) return std::optional<Batch>();
  open_ = false;
  v1::HaBatch message;
  if (!message.ParseFromString(data_)) {
    return Internal("corrupt batch " + std::to_string(seq_) + " in the replicated log");
  }
  data_.clear();
  Batch batch;
  batch.seq = seq_;
  batch.epoch = epoch_;
  batch.writes.reserve(message.writes_size());
  for (auto& w : *message.mutable_writes()) {
    if (w.erase()) {
      batch.writes.push_back(StoreWrite{std::move(*w.mutable_key()), std::nullopt});
    } else {
      batch.writes.push_back(
          StoreWrite{std::move(*w.mutable_key()), std::move(*w.mutable_value())});
    }
  }
  return std::optional<Batch>(std::move(batch));
}

}  // namespace snn
