// snn-ca: makes the cluster's certificate authority and the certificates it signs.
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "common/base/file_util.h"
#include "common/base/split.h"
#include "common/identity/pki.h"

namespace {

constexpr char kUsage[] = R"(usage: snn-ca COMMAND DIR [OPTIONS]

Makes the cluster's certificate authority (CA) and the certificates it signs. The master keeps
DIR (its --tls_dir: ca.crt, ca.key, master.crt, master.key); every agent and every snnctl host
needs a copy of ca.crt only.

Commands:
  init DIR [--days N] [--force]
                     create the CA: DIR/ca.key (mode 0600) and DIR/ca.crt (default 3650 days);
                     refuses to replace an existing CA without --force
  master DIR [--host H[,H...]] [--days N]
                     the master's certificate and key, DIR/master.crt and DIR/master.key
                     (default 825 days); --host lists the names and addresses it
                     is reached at (clients refuse it under any other; default: this
                     host's name, localhost, 127.0.0.1 and ::1)
  node DIR NAME [--out OUTDIR] [--days N]
                     a certificate for node NAME without a join token: OUTDIR/node.pem (its
                     certificate and key, mode 0600) and a copy of ca.crt (default OUTDIR: DIR)
                     (default 30 days; nodes renew their certificates themselves)

Nodes usually enrol instead: `snnctl node token NAME` prints a one-time token, and
`snn-agent --join_token_file=FILE` uses it to get a certificate from the master.
)";

int Fail(const std::string& message) {
  std::cerr << "snn-ca: " << message << "\n";
  return 1;
}

snn::Result<snn::pki::KeyAndCert> LoadCa(const std::string& dir) {
  auto key = snn::ReadWholeFile(dir + "/ca.key", "the CA key");
  if (!key.ok()) return snn::Status(key.status().code(), key.status().message() + " (snn-ca init)");
  auto cert = snn::ReadWholeFile(dir + "/ca.crt", "the CA certificate");
  if (!cert.ok()) return cert.status();
  return snn::pki::KeyAndCert{*key, *cert};
}

// snn-ca init DIR: a new CA.
int Init(const std::string& dir, int64_t days, bool force) {
  std::error_code ec;
  if (std::filesystem::exists(dir + "/ca.key", ec) && !force) {
    return Fail(dir +
                "/ca.key exists: a new CA would void every certificate it signed "
                "(--force to replace it)");
  }
  std::filesystem::create_directories(dir, ec);
  auto ca = snn::pki::NewCa("snn cluster CA", (days ? days : 3650) * 86400);
  if (!ca.ok()) return Fail(ca.status().message());
  if (auto s = snn::WriteFileAtomic(dir + "/ca.key", ca->key_pem, 0600); !s.ok()) {
    return Fail(s.message());
  }
  if (auto s = snn::WriteFileAtomic(dir + "/ca.crt", ca->cert_pem, 0644); !s.ok()) {
    return Fail(s.message());
  }
  std::cout << "CA created: " << dir << "/ca.crt (copy it to every node and client host), " << dir
            << "/ca.key (keep it on the master only)\n";
  return 0;
}

// snn-ca master DIR: the master's certificate, naming the hosts clients reach it by.
int IssueMaster(const snn::pki::KeyAndCert& ca, const std::string& dir, int64_t days,
                std::string hosts) {
  snn::pki::Issue issue;
  issue.common_name = "snn-master";
  issue.role = snn::pki::kRoleMaster;
  issue.validity_s = (days ? days : 825) * 86400;
  if (hosts.empty()) {  // clients check the name they reach the master by: name this host
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    hosts = std::string(name) + ",localhost,127.0.0.1,::1";
    std::cout << "no --host: the certificate names " << hosts
              << " (clients refuse a master reached by any other name)\n";
  }
  for (std::string& host : snn::SplitList(hosts)) issue.alt_names.push_back(std::move(host));
  auto cert = snn::pki::IssueWithNewKey(ca, issue);
  if (!cert.ok()) return Fail(cert.status().message());
  if (auto s = snn::WriteFileAtomic(dir + "/master.key", cert->key_pem, 0600); !s.ok()) {
    return Fail(s.message());
  }
  if (auto s = snn::WriteFileAtomic(dir + "/master.crt", cert->cert_pem, 0644); !s.ok()) {
    return Fail(s.message());
  }
  std::cout << "master certificate: " << dir << "/master.crt\n";
  return 0;
}

// snn-ca node DIR NAME: a node's certificate and key (with the CA's certificate in --out).
int IssueNode(const snn::pki::KeyAndCert& ca, const std::string& dir, int64_t days,
              const std::string& name, const std::string& out) {
  snn::pki::Issue issue;
  std::error_code ec;
  issue.common_name = name;
  issue.role = snn::pki::kRoleNode;
  issue.validity_s = (days ? days : 30) * 86400;
  const std::string to = out.empty() ? dir : out;
  std::filesystem::create_directories(to, ec);
  auto cert = snn::pki::IssueWithNewKey(ca, issue);
  if (!cert.ok()) return Fail(cert.status().message());
  if (auto s = snn::WriteFileAtomic(to + "/node.pem", cert->cert_pem + cert->key_pem, 0600);
      !s.ok()) {
    return Fail(s.message());
  }
  if (to != dir) {
    if (auto s = snn::WriteFileAtomic(to + "/ca.crt", ca.cert_pem, 0644); !s.ok()) {
      return Fail(s.message());
    }
  }
  std::cout << "node " << name << ": " << to << "/node.pem\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args;
  std::string out, hosts;
  int64_t days = 0;
  bool force = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string value;
    const size_t eq = a.find('=');
    const bool inline_value = a.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    }
    auto take = [&]() -> bool {
      if (inline_value) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--force") {
      force = true;
    } else if (a == "--days" || a == "--out" || a == "--host") {
      if (!take()) return Fail(a + " needs a value");
      if (a == "--out") out = value;
      if (a == "--host") hosts = value;
      if (a == "--days") {
        auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), days);
        if (ec != std::errc() || p != value.data() + value.size() || days < 1 || days > 36500) {
          return Fail("--days must be 1 to 36500");
        }
      }
    } else if (a.size() > 1 && a[0] == '-') {
      return Fail("unknown option '" + a + "' (see snn-ca --help)");
    } else {
      args.push_back(a);
    }
  }
  if (args.size() < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string& command = args[0];
  const std::string& dir = args[1];
  std::error_code ec;
  if (command == "init" && args.size() == 2) return Init(dir, days, force);
  auto ca = LoadCa(dir);
  if (!ca.ok()) return Fail(ca.status().message());
  if (command == "master" && args.size() == 2) return IssueMaster(*ca, dir, days, hosts);
  if (command == "node" && args.size() == 3) return IssueNode(*ca, dir, days, args[2], out);
  std::cerr << kUsage;
  return 2;
}
