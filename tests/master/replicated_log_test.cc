#include "master/ha/replicated_log.h"

#include <gtest/gtest.h>

#include "master/ha/etcd_client.h"
#include "master/store/memory_store.h"

namespace snn {
namespace {

StoreBatch Writes(int n, size_t value_bytes) {
  StoreBatch batch;
  for (int i = 0; i < n; ++i) {
    batch.push_back(StoreWrite{"job/" + std::to_string(i), std::string(value_bytes, 'a' + i % 26)});
  }
  batch.push_back(StoreWrite{"gone", std::nullopt});
  return batch;
}

void ExpectSame(const StoreBatch& a, const StoreBatch& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].key, b[i].key);
    EXPECT_EQ(a[i].value, b[i].value);
  }
}

TEST(ReplicatedLogTest, AChunkedBatchIsRebuiltWholeAndKeysSortInLogOrder) {
  const StoreBatch batch = Writes(20, 300);
  auto chunks = EncodeBatch("/p/", batch, 7, 42, 1000);
  ASSERT_GT(chunks.size(), 3u);
  for (size_t i = 1; i < chunks.size(); ++i) EXPECT_LT(chunks[i - 1].first, chunks[i].first);
  EXPECT_LT(chunks.back().first, LogSeqKey("/p/", 8));
  EXPECT_GE(chunks.front().first, LogSeqKey("/p/", 7));
  LogAssembler assembler;
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    auto fed = assembler.Feed(chunks[i].second);
    ASSERT_TRUE(fed.ok());
    EXPECT_FALSE(fed->has_value()) << "a batch came out before its last chunk";
  }
  auto whole = assembler.Feed(chunks.back().second);
  ASSERT_TRUE(whole.ok() && whole->has_value());
  EXPECT_EQ((*whole)->seq, 7u);
  ExpectSame((*whole)->writes, batch);
}

TEST(ReplicatedLogTest, ADeposedLeadersUnfinishedBatchGivesWayToItsSuccessors) {
  const StoreBatch old_batch = Writes(20, 300);
  const StoreBatch new_batch = Writes(3, 10);
  auto old_chunks = EncodeBatch("/p/", old_batch, 7, 42, 1000);
  auto new_chunks = EncodeBatch("/p/", new_batch, 7, 99, 1000);
  ASSERT_EQ(new_chunks.size(), 1u);
  // In key order the old epoch's chunks come first; only a part of them was written.
  EXPECT_LT(old_chunks[1].first, new_chunks[0].first);
  LogAssembler assembler;
  ASSERT_FALSE(assembler.Feed(old_chunks[0].second)->has_value());
  ASSERT_FALSE(assembler.Feed(old_chunks[1].second)->has_value());
  auto batch = assembler.Feed(new_chunks[0].second);
  ASSERT_TRUE(batch.ok() && batch->has_value());
  ExpectSame((*batch)->writes, new_batch);
  // A reader that starts in the middle of a batch skips to the next whole one.
  LogAssembler late;
  EXPECT_FALSE(late.Feed(old_chunks[2].second)->has_value());
  EXPECT_TRUE(late.Feed(new_chunks[0].second)->has_value());
  EXPECT_FALSE(late.Feed("not a chunk \xff\xff").ok());
}

TEST(ReplicatedLogTest, TheAppliedNumberIsReadFromTheMastersOwnStore) {
  MemoryStore store;
  EXPECT_EQ(*ReadAppliedSeq(store), 0u);
  Status written;
  store.Commit({StoreWrite{kAppliedSeqKey, "00000000000000ff"}}, [&](Status s) { written = s; });
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*ReadAppliedSeq(store), 255u);
  store.Commit({StoreWrite{kAppliedSeqKey, "zz"}}, [](Status) {});
  EXPECT_FALSE(ReadAppliedSeq(store).ok());
}

TEST(ReplicatedLogTest, EtcdEndpointsAndPrefixRanges) {
  auto endpoints = ParseEtcdEndpoints("http://a:2379,b:2380/");
  ASSERT_TRUE(endpoints.ok());
  EXPECT_EQ(endpoints->hosts, (std::vector<std::string>{"a:2379", "b:2380"}));
  EXPECT_FALSE(endpoints->tls);
  EXPECT_FALSE(ParseEtcdEndpoints("").ok());
  EXPECT_FALSE(ParseEtcdEndpoints("a").ok());
  EXPECT_FALSE(ParseEtcdEndpoints("a:x").ok());
  auto secure = ParseEtcdEndpoints("https://a:1,https://b:2");
  ASSERT_TRUE(secure.ok());
  EXPECT_TRUE(secure->tls);
  EXPECT_NE(ParseEtcdEndpoints("https://a:1,b:2").status().message().find("mix"),
            std::string::npos);
  EXPECT_NE(EtcdCredentials(*endpoints, {"/ca.crt", "", ""}).status().message().find("https"),
            std::string::npos);
  EXPECT_NE(EtcdCredentials(*secure, {"/nonexistent/ca.crt", "", ""})
                .status()
                .message()
                .find("cannot read the etcd CA certificate /nonexistent/ca.crt"),
            std::string::npos);
  EXPECT_NE(EtcdCredentials(*secure, {"", "/c.crt", ""}).status().message().find("both"),
            std::string::npos);
  EXPECT_EQ(PrefixEnd("/snn/log/"), "/snn/log0");
  EXPECT_EQ(PrefixEnd(std::string("a\xff", 2)), "b");
}

}  // namespace
}  // namespace snn
