// The cluster's PKI: the CA signs what the master decides (name, role), never what a request
// asks for; a tampered request or a foreign CA's certificate does not verify.
#include "common/identity/pki.h"

#include <gtest/gtest.h>

namespace snn::pki {
namespace {

TEST(PkiTest, TheSignedCertificateNamesWhatTheMasterDecided) {
  auto ca = NewCa("test CA", 3600);
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  auto key = NewPrivateKey();
  ASSERT_TRUE(key.ok());
  auto csr = NewCsr(*key, "snn-master");  // the request asks to be the master
  ASSERT_TRUE(csr.ok());
  auto cert = SignCsr(*ca, *csr, {"node3", kRoleNode, 600, {}});
  ASSERT_TRUE(cert.ok()) << cert.status().ToString();
  auto info = ReadCert(*cert);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->common_name, "node3");
  EXPECT_EQ(info->role, "node");
  EXPECT_NEAR(static_cast<double>(info->not_after_s - info->not_before_s), 660, 2);
  EXPECT_TRUE(VerifyCert(ca->cert_pem, *cert).ok());
}

TEST(PkiTest, TamperedRequestsAndForeignCertificatesAreRefused) {
  auto ca = NewCa("test CA", 3600);
  auto other = NewCa("rogue CA", 3600);
  ASSERT_TRUE(ca.ok() && other.ok());
  auto foreign = IssueWithNewKey(*other, {"node1", kRoleNode, 600, {}});
  ASSERT_TRUE(foreign.ok());
  EXPECT_FALSE(VerifyCert(ca->cert_pem, foreign->cert_pem).ok());
  auto key = NewPrivateKey();
  auto csr = NewCsr(*key, "node1");
  ASSERT_TRUE(csr.ok());
  std::string tampered = *csr;
  tampered[tampered.size() / 2] = tampered[tampered.size() / 2] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(SignCsr(*ca, tampered, {"node1", kRoleNode, 600, {}}).ok());
  EXPECT_FALSE(SignCsr(*ca, "not a request", {"node1", kRoleNode, 600, {}}).ok());
  EXPECT_FALSE(SignCsr(*ca, *csr, {"node1", "admin", 600, {}}).ok());  // no such role
  EXPECT_FALSE(SignCsr(*ca, *csr, {"", kRoleNode, 600, {}}).ok());
}

}  // namespace
}  // namespace snn::pki
