// The account tree's quotas (TenantConfig.parent; PoolCap.nominal, borrowing_limit,
// lending_limit): Kueue's hierarchical cohorts, in cores per pool.
//
// In a pool, every tree (institute > group > project) with a nominal anywhere in it is governed;
// other tenants are not. Each node n of a governed tree has:
//   quota(n)      = nominal(n) + what its children lend it
//   lent(n)       = min(quota(n), lending_limit(n)): the part its parent may hand to others
//                   (0 at a root)
//   guaranteed(n) = quota(n) - lent(n): its subtree's alone
// and the running jobs give it a level:
//   level(n)      = its own jobs' cores + over its children, what each uses beyond its
//                   guaranteed part (what it draws from n)
// A root never goes past its quota; a node with a borrowing limit never past quota + borrowing
// limit. So a subtree never runs more than its nominals plus its borrowing limit, the tree never
// more than its nominals, and what a subtree does not lend stays its own.
//
// A subtree *borrows* while its level is above its quota. What it borrows is on loan: a job within
// its tenant's share (WithinShare: each node on its path within its quota, were the others to
// borrow nothing) may take it back, preempting jobs of subtrees that borrow (ReclaimableFrom),
// preemptible or not. Sessions and services are never preempted, so they never borrow: they
// start only within their share.
// Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/status.h"
#include "proto/policy.pb.h"

namespace snn {

inline constexpr uint64_t kNoCoreCap = UINT64_MAX;
// Levels of an account tree, a root's included.
inline constexpr int kMaxTreeDepth = 8;

// One pool's governed trees.
class QuotaTree {
 public:
  struct Node {
    std::string name;
    int parent = -1;
    int depth = 0;  // 0: a root
    uint64_t nominal = 0, borrowing_limit = kNoCoreCap, lending_limit = kNoCoreCap;
    uint64_t quota = 0, lent = 0, guaranteed = 0;
    uint64_t nominal_sum = 0;  // over the subtree
  };
  // Parents before children.
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int i) const { return nodes_[i]; }
  // The node of a tenant; -1 if it is in no governed tree in this pool.
  int Find(std::string_view tenant) const;

 private:
  friend class QuotaTreeBuilder;
  std::vector<Node> nodes_;
  std::map<std::string, int, std::less<>> index_;
};

// Per pool name: the pools where some tree has a nominal.
using QuotaTrees = std::map<std::string, QuotaTree, std::less<>>;

// Parents that exist, no cycle, at most kMaxTreeDepth levels, borrowing and lending limits only
// below a root. One line naming the tenant otherwise.
Status CheckAccountTree(const v1::SchedulingConfig& config);
// The governed trees of a checked policy; null when no tenant has a nominal.
std::shared_ptr<const QuotaTrees> BuildQuotaTrees(const v1::SchedulingConfig& config);

// What the running jobs hold in one pool's trees.
class QuotaTreeUse {
 public:
  explicit QuotaTreeUse(const QuotaTree& tree);

  const QuotaTree& tree() const { return *tree_; }
  // A job of node `n`'s tenant starts (sign 1) or stops (-1) holding `cores`.
  void Add(int n, uint64_t cores, int sign);
  // How many more cores a job of `n`'s tenant may take now (borrowing included).
  uint64_t Available(int n) const;
  // Whether `cores` more at `n` keep each node on its path within its quota, when the other
  // subtrees borrow nothing (what they borrow can be taken back).
  bool WithinShare(int n, uint64_t cores) const;
  bool Borrows(int n) const { return level_[n] > tree_->node(n).quota; }
  // Whether a job of node `victim` runs on what its subtree borrowed from the branch of `n`:
  // the node on its path just below where it meets `n`'s path borrows.
  bool ReclaimableFrom(int victim, int n) const;
  uint64_t level(int n) const { return level_[n]; }
  // Moves with every Add: what was worked out from the use holds while it stays.
  uint64_t version() const { return version_; }
  uint64_t subtree_use(int n) const { return subtree_[n]; }
  // Why `cores` more at `n` do not fit: the path's use against its shares.
  std::string Explain(int n, uint64_t cores, bool interactive) const;

 private:
  uint64_t Excess(int n) const;  // beyond its guaranteed part: drawn from its parent

  const QuotaTree* tree_;
  uint64_t version_ = 0;
  std::vector<uint64_t> own_, level_, subtree_;
  // Over the children: what each draws from the node, at most what it lends (its share of it).
  std::vector<uint64_t> lent_use_;
};

}  // namespace snn
