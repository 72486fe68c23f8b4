// Node certificates renew only as their holder would (issue 64: a copy of a node's certificate
// renewed itself at any age from another client): over the certificate's own session, in the
// second half of its life, and once; a second renewal of one serial can only come from a copy,
// and revokes every certificate of the node. The clock is the test's.
#include "master/services/enrol_service.h"

#include <gtest/gtest.h>

#include "common/identity/pki.h"
#include "master/store/memory_store.h"

namespace snn {
namespace {

class Sink : public ReplySink {
 public:
  void Reply(uint64_t, const Status& status, const google::protobuf::Message* response) override {
    answered = true;
    this->status = status;
    if (response != nullptr) bytes = response->SerializeAsString();
  }
  const std::string& peer() const override { return peer_; }
  bool answered = false;
  Status status;
  std::string bytes;

 private:
  std::string peer_ = "127.0.0.1:1";
};

class EnrolServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = pki::NewCa("test-ca", 86400 * 10);
    ASSERT_TRUE(ca.ok()) << ca.status().ToString();
    EnrolOptions options;
    options.ca = *ca;
    options.node_cert_validity_s = 1000;
    service_.set_options(options);
    service_.Register(router_);
  }

  // node1's session, holding a certificate of `serial` valid from `from_s` for 1,000 s, asks to
  // be renewed.
  std::shared_ptr<Sink> Renew(const std::string& serial, int64_t from_s) {
    Identity node;
    node.kind = Identity::Kind::kNode;
    node.node = "node1";
    node.cert_serial = serial;
    node.cert_not_before_s = from_s;
    node.cert_not_after_s = from_s + 1000;
    auto key = pki::NewPrivateKey();
    v1::RenewRequest req;
    req.set_csr_pem(*pki::NewCsr(*key, "node1"));
    v1::Envelope envelope;
    envelope.set_id(1);
    envelope.set_method(std::string(rpc::kNodeRenew.name));
    envelope.set_payload(req.SerializeAsString());
    auto sink = std::make_shared<Sink>();
    router_.Dispatch(sink, envelope, node);
    return sink;
  }
  int64_t now_s() const { return clock_.NowMs() / 1000; }

  ManualClock clock_;
  MemoryStore store_;
  Journal journal_{store_, [](std::function<void()> fn) { fn(); }};
  NodeApprovals approvals_;
  std::vector<std::string> revoked_;
  EnrolService service_{journal_, clock_, EnrolOptions{}, approvals_,
                        [this](const std::string& node) { revoked_.push_back(node); }};
  MethodRouter router_;
};

TEST_F(EnrolServiceTest, ACertificateRenewsInTheSecondHalfOfItsLifeOnly) {
  auto young = Renew("0A", now_s() - 100);  // 100 s of 1,000
  ASSERT_TRUE(young->answered);
  EXPECT_EQ(young->status.code(), Code::kFailedPrecondition) << young->status.ToString();
  EXPECT_NE(young->status.message().find("second half of its life"), std::string::npos);
  auto due = Renew("0A", now_s() - 700);
  ASSERT_TRUE(due->answered);
  ASSERT_TRUE(due->status.ok()) << due->status.ToString();
  v1::RenewResponse response;
  ASSERT_TRUE(response.ParseFromString(due->bytes));
  auto info = pki::ReadCert(response.cert_pem());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->common_name, "node1");
  EXPECT_TRUE(revoked_.empty());
}

TEST_F(EnrolServiceTest, ASecondRenewalOfOneCertificateRevokesEveryCertificateOfTheNode) {
  const int64_t t0 = now_s();
  ASSERT_TRUE(Renew("0B", t0 - 700)->status.ok());  // 0B lives until t0 + 300
  // Another certificate renews too: that is the holder's other one, and fine.
  ASSERT_TRUE(Renew("0C", t0 - 600)->status.ok());
  EXPECT_TRUE(revoked_.empty());
  // 0B again, while it still lives: only a copy of it can ask. Refused, and the node revoked.
  clock_.AdvanceMs(100'000);
  auto copy = Renew("0B", t0 - 700);
  ASSERT_TRUE(copy->answered);
  EXPECT_EQ(copy->status.code(), Code::kUnauthenticated) << copy->status.ToString();
  EXPECT_NE(copy->status.message().find("was renewed before: a copy of it is in use"),
            std::string::npos)
      << copy->status.message();
  EXPECT_EQ(revoked_, std::vector<std::string>{"node1"});
  const v1::NodeApproval* approval = approvals_.Find("node1");
  ASSERT_NE(approval, nullptr);
  EXPECT_TRUE(approval->revoked());
  EXPECT_FALSE(approvals_.CheckCertificate("node1", approval->generation()).ok());
}

}  // namespace
}  // namespace snn
