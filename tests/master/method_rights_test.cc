// Default deny: every method the master serves declares the right it needs, the table is the
// one reviewed here (a new method fails this test until its right is written down), and a
// caller without a method's right is refused: nobody at all except for enrolment, users for node
// and admin methods, nodes for every user method, everyone but another master for ha.snapshot.
#include <gtest/gtest.h>

#include <map>

#include "common/base/clock.h"
#include "common/rpc/rpc_methods.h"
#include "master/auth/access_policy.h"
#include "master/master_server.h"
#include "master/store/memory_store.h"

namespace snn {
namespace {

Identity User(Role role) {
  Identity who;
  who.kind = Identity::Kind::kUser;
  who.uid = 1000;
  who.user = "alice";
  who.role = role;
  return who;
}

Identity Node() {
  Identity who;
  who.kind = Identity::Kind::kNode;
  who.node = "node1";
  return who;
}

TEST(MethodRightsTest, EveryMethodDeclaresTheReviewedRight) {
  MasterConfig config;
  config.auth = "none";
  ManualClock clock;
  MasterServer master(config, clock, std::make_unique<MemoryStore>());
  const std::map<std::string, Right> expected = {
      {"job.submit", Right::kUser},
      {"job.cancel", Right::kUser},
      {"job.hold", Right::kUser},
      {"job.show", Right::kUser},
      {"job.list", Right::kUser},
      {"pool.status", Right::kUser},
      {"admin.policy.get", Right::kUser},
      {"admin.tenant.members", Right::kUser},
      {"billing.invoice", Right::kUser},
      {"billing.credit", Right::kAdmin},
      {"admin.queue.set", Right::kAdmin},
      {"admin.tenant.set", Right::kAdmin},
      {"admin.drain", Right::kOperator},
      {"admin.reservation.create", Right::kOperator},
      {"admin.reservation.list", Right::kUser},
      {"admin.reservation.delete", Right::kOperator},
      {"admin.sim_fault", Right::kOperator},
      {"admin.board.mark", Right::kOperator},
      {"node.token", Right::kAdmin},
      {"node.enrol", Right::kEnrol},
      {"node.renew", Right::kNode},
      {"master.register", Right::kNode},
      {"master.heartbeat", Right::kNode},
      {"master.task_status", Right::kNode},
      {"ha.snapshot", Right::kMaster},
      {"billing.usage", Right::kUser},
      {"billing.report", Right::kUser},
      {"job.requeue", Right::kUser},
      {"job.logs", Right::kUser},
      {"node.add", Right::kAdmin},
      {"node.revoke", Right::kAdmin},
      {"token.create", Right::kUser},
      {"token.list", Right::kUser},
      {"token.revoke", Right::kUser},
      {"job.results", Right::kUser},    // the handler: those who may manage the job, as job.logs
      {"job.keepalive", Right::kUser},  // the handler: those who may manage the session
      // The handlers: a tenant the service admits; each caller reads only their own.
      {"experiment.submit", Right::kUser},
      {"experiment.list", Right::kUser},
  };
  const auto methods = master.router().Methods();
  EXPECT_EQ(methods.size(), expected.size());
  // The master serves exactly the methods the protocol's table lists, with the rights it
  // declares there (common/rpc/rpc_methods.h).
  EXPECT_EQ(methods.size(), rpc::kMasterMethods.size());
  for (const RpcMethodInfo& m : rpc::kMasterMethods) {
    auto served = methods.find(std::string(m.name));
    ASSERT_NE(served, methods.end()) << m.name << " is in the table but not served";
    EXPECT_EQ(served->second, m.right) << m.name;
  }
  for (const auto& [method, right] : methods) {
    auto it = expected.find(method);
    ASSERT_NE(it, expected.end()) << method << " is served but its right was never reviewed";
    EXPECT_EQ(right, it->second) << method;
  }
}

TEST(MethodRightsTest, CallersWithoutTheRightAreRefusedWithTheRightNamed) {
  MasterConfig config;
  config.auth = "none";
  ManualClock clock;
  MasterServer master(config, clock, std::make_unique<MemoryStore>());
  for (const auto& [method, right] : master.router().Methods()) {
    const Status nobody = Authorize(Identity(), right, method);
    if (right == Right::kEnrol) {
      EXPECT_TRUE(nobody.ok()) << method;  // the join token is checked by the handler
      continue;
    }
    EXPECT_EQ(nobody.code(), Code::kUnauthenticated) << method;
    const bool user_method = right == Right::kUser || right == Right::kReader ||
                             right == Right::kOperator || right == Right::kAdmin;
    EXPECT_EQ(Authorize(Node(), right, method).ok(), right == Right::kNode) << method;
    EXPECT_EQ(Authorize(User(Role::kUser), right, method).ok(), right == Right::kUser) << method;
    EXPECT_EQ(Authorize(User(Role::kOperator), right, method).ok(),
              right == Right::kUser || right == Right::kReader || right == Right::kOperator)
        << method;
    EXPECT_EQ(Authorize(User(Role::kAdmin), right, method).ok(), user_method) << method;
    // Only another master (its certificate) may copy the store: not even an admin.
    Identity master_peer;
    master_peer.kind = Identity::Kind::kMaster;
    EXPECT_EQ(Authorize(master_peer, right, method).ok(), right == Right::kMaster) << method;
    const Status refused = Authorize(User(Role::kUser), Right::kAdmin, method);
    EXPECT_EQ(refused.code(), Code::kPermissionDenied);
    EXPECT_NE(refused.message().find("needs the admin role"), std::string::npos);
    EXPECT_NE(refused.message().find("uid 1000 (alice)"), std::string::npos);
  }
}

TEST(MethodRightsTest, RolesAndTenantsComeFromThePolicy) {
  v1::SchedulingConfig policy;
  policy.mutable_access()->mutable_operators()->add_groups("ops");
  policy.mutable_access()->set_personal_tenants(false);
  auto* lab = policy.add_tenants();
  lab->set_name("lab");
  lab->mutable_members()->add_groups("lab");
  lab->add_coordinators("carol");
  Identity alice = User(Role::kUser);
  alice.groups = {"users", "lab"};
  Identity root = User(Role::kUser);
  root.uid = 0;
  EXPECT_EQ(RoleOf(policy.access(), root, 999), Role::kAdmin);
  EXPECT_EQ(RoleOf(policy.access(), alice, 999), Role::kUser);
  Identity op = alice;
  op.groups = {"ops"};
  EXPECT_EQ(RoleOf(policy.access(), op, 999), Role::kOperator);
  EXPECT_TRUE(IsMember(policy, alice, "lab"));
  EXPECT_FALSE(IsMember(policy, alice, "alice"));  // personal tenants off
  EXPECT_FALSE(IsMember(policy, op, "lab"));
  EXPECT_EQ(*ActingTenant(policy, alice, ""), "lab");
  EXPECT_EQ(ActingTenant(policy, op, "lab").status().code(), Code::kPermissionDenied);
  Identity carol = alice;
  carol.user = "carol";
  carol.uid = 1001;
  carol.groups = {};
  EXPECT_TRUE(MayManageJob(policy, carol, "lab", 1000, "alice"));
  EXPECT_TRUE(MayManageJob(policy, alice, "lab", 1000, "alice"));
  Identity bob = alice;
  bob.user = "bob";
  bob.uid = 1002;
  EXPECT_FALSE(MayManageJob(policy, bob, "lab", 1000, "alice"));
  policy.mutable_access()->clear_personal_tenants();
  EXPECT_TRUE(IsMember(policy, bob, "bob"));  // personal tenants by default
}

}  // namespace
}  // namespace snn
