#include "master/sched/quota_tree.h"

#include <algorithm>
#include <set>

namespace snn {
namespace {

uint64_t Sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }
uint64_t Sum(uint64_t a, uint64_t b) { return a > kNoCoreCap - b ? kNoCoreCap : a + b; }

// Tenants by name, their parents by index (-1: none, -2: a name that is no tenant).
struct Tenants {
  std::map<std::string_view, int> index;
  std::vector<int> parent;
  std::vector<std::vector<int>> children;

  explicit Tenants(const v1::SchedulingConfig& c) {
    for (int i = 0; i < c.tenants_size(); ++i) index.emplace(c.tenants(i).name(), i);
    parent.assign(c.tenants_size(), -1);
    children.resize(c.tenants_size());
    for (int i = 0; i < c.tenants_size(); ++i) {
      const std::string& p = c.tenants(i).parent();
      if (p.empty()) continue;
      auto it = index.find(p);
      parent[i] = it == index.end() ? -2 : it->second;
      if (parent[i] >= 0) children[parent[i]].push_back(i);
    }
  }
};

}  // namespace

int QuotaTree::Find(std::string_view tenant) const {
  auto it = index_.find(tenant);
  return it == index_.end() ? -1 : it->second;
}

Status CheckAccountTree(const v1::SchedulingConfig& c) {
  const Tenants t(c);
  for (int i = 0; i < c.tenants_size(); ++i) {
    const v1::TenantConfig& tenant = c.tenants(i);
    if (t.parent[i] == -2) {
      return InvalidArgument("tenant '" + tenant.name() + "': its parent '" + tenant.parent() +
                             "' is not a tenant of the policy; declare it first");
    }
    std::string path = tenant.name();
    int depth = 1;
    for (int p = t.parent[i]; p >= 0; p = t.parent[p]) {
      path += " > " + c.tenants(p).name();
      if (p == i) {
        return InvalidArgument("tenant '" + tenant.name() +
                               "': its parents go round in a circle (" + path + ")");
      }
      if (++depth > kMaxTreeDepth) {
        return InvalidArgument("tenant '" + tenant.name() + "' is more than " +
                               std::to_string(kMaxTreeDepth) +
                               " levels deep in the account tree (" + path + " ...)");
      }
    }
    for (const auto& cap : tenant.quotas()) {
      if (t.parent[i] < 0 && (cap.has_borrowing_limit() || cap.has_lending_limit())) {
        return InvalidArgument("tenant '" + tenant.name() + "' in pool '" + cap.pool() + "': " +
                               (cap.has_borrowing_limit() ? "borrowing_limit" : "lending_limit") +
                               " needs a parent to borrow from or lend to");
      }
    }
  }
  return Status::Ok();
}

class QuotaTreeBuilder {
 public:
  static void Add(const v1::SchedulingConfig& c, const Tenants& t, int root,
                  const std::string& pool, QuotaTree* tree) {
    const size_t first = tree->nodes_.size();
    std::vector<int> order{root};  // config indices, parents first
    for (size_t k = 0; k < order.size(); ++k) {
      for (int child : t.children[order[k]]) order.push_back(child);
    }
    std::map<int, int> node_of;
    for (int i : order) {
      QuotaTree::Node n;
      n.name = c.tenants(i).name();
      if (t.parent[i] >= 0 && i != root) {
        n.parent = node_of.at(t.parent[i]);
        n.depth = tree->nodes_[n.parent].depth + 1;
      }
      for (const auto& cap : c.tenants(i).quotas()) {
        if (cap.pool() != pool) continue;
        n.nominal = cap.nominal();
        if (cap.has_borrowing_limit()) n.borrowing_limit = cap.borrowing_limit();
        if (cap.has_lending_limit()) n.lending_limit = cap.lending_limit();
      }
      node_of[i] = static_cast<int>(tree->nodes_.size());
      tree->index_.emplace(n.name, node_of[i]);
      tree->nodes_.push_back(std::move(n));
    }
    for (size_t k = tree->nodes_.size(); k-- > first;) {  // children before parents
      QuotaTree::Node& n = tree->nodes_[k];
      n.quota = Sum(n.quota, n.nominal);
      n.nominal_sum = Sum(n.nominal_sum, n.nominal);
      n.lent = n.parent < 0 ? 0 : std::min(n.quota, n.lending_limit);
      n.guaranteed = n.quota - n.lent;
      if (n.parent >= 0) {
        QuotaTree::Node& p = tree->nodes_[n.parent];
        p.quota = Sum(p.quota, n.lent);
        p.nominal_sum = Sum(p.nominal_sum, n.nominal_sum);
      }
    }
  }
};

std::shared_ptr<const QuotaTrees> BuildQuotaTrees(const v1::SchedulingConfig& c) {
  const Tenants t(c);
  auto root_of = [&](int i) {
    while (t.parent[i] >= 0) i = t.parent[i];
    return i;
  };
  std::map<std::string, std::set<int>> governed;  // pool -> roots (config order)
  for (int i = 0; i < c.tenants_size(); ++i) {
    for (const auto& cap : c.tenants(i).quotas()) {
      if (cap.has_nominal()) governed[cap.pool()].insert(root_of(i));
    }
  }
  if (governed.empty()) return nullptr;
  auto trees = std::make_shared<QuotaTrees>();
  for (const auto& [pool, roots] : governed) {
    QuotaTree& tree = (*trees)[pool];
    for (int root : roots) QuotaTreeBuilder::Add(c, t, root, pool, &tree);
  }
  return trees;
}

QuotaTreeUse::QuotaTreeUse(const QuotaTree& tree)
    : tree_(&tree),
      own_(tree.nodes().size()),
      level_(tree.nodes().size()),
      subtree_(tree.nodes().size()),
      lent_use_(tree.nodes().size()) {}

uint64_t QuotaTreeUse::Excess(int n) const { return Sub(level_[n], tree_->node(n).guaranteed); }

void QuotaTreeUse::Add(int n, uint64_t cores, int sign) {
  ++version_;
  if (sign < 0) cores = std::min(cores, own_[n]);
  own_[n] = sign > 0 ? own_[n] + cores : own_[n] - cores;
  for (int m = n; m >= 0; m = tree_->node(m).parent) {
    subtree_[m] = sign > 0 ? subtree_[m] + cores : Sub(subtree_[m], cores);
  }
  // The level changes by `cores` at n, and each parent's by what its child draws from it.
  int64_t delta = sign > 0 ? static_cast<int64_t>(cores) : -static_cast<int64_t>(cores);
  for (int m = n; m >= 0 && delta != 0;) {
    const QuotaTree::Node& node = tree_->node(m);
    const uint64_t old_excess = Excess(m);
    level_[m] = delta > 0 ? level_[m] + static_cast<uint64_t>(delta)
                          : Sub(level_[m], static_cast<uint64_t>(-delta));
    if (node.parent < 0) break;
    const uint64_t new_excess = Excess(m);
    lent_use_[node.parent] += std::min(new_excess, node.lent);
    lent_use_[node.parent] -= std::min(old_excess, node.lent);
    delta = static_cast<int64_t>(new_excess) - static_cast<int64_t>(old_excess);
    m = node.parent;
  }
}

uint64_t QuotaTreeUse::Available(int n) const {
  const QuotaTree::Node& node = tree_->node(n);
  if (node.parent < 0) return Sub(node.quota, level_[n]);
  const uint64_t own_part = Sub(node.guaranteed, level_[n]);
  uint64_t from_parent = Available(node.parent);
  if (node.borrowing_limit != kNoCoreCap) {
    const uint64_t most = Sum(node.lent, node.borrowing_limit);
    from_parent = std::min(from_parent, Sub(most, Excess(n)));
  }
  return Sum(own_part, from_parent);
}

bool QuotaTreeUse::WithinShare(int n, uint64_t cores) const {
  // Each node's level on the path, with every other subtree drawing at most what it lends.
  uint64_t level = own_[n] + lent_use_[n] + cores;
  for (int m = n;;) {
    const QuotaTree::Node& node = tree_->node(m);
    if (level > node.quota) return false;
    if (node.parent < 0) return true;
    const int p = node.parent;
    const uint64_t draws = Sub(level, node.guaranteed);
    level = own_[p] + lent_use_[p] - std::min(Excess(m), node.lent) + draws;
    m = p;
  }
}

bool QuotaTreeUse::ReclaimableFrom(int victim, int n) const {
  std::set<int> path;
  for (int m = n; m >= 0; m = tree_->node(m).parent) path.insert(m);
  // The victim's side just below where the paths meet: what it borrows there came from the
  // branch of `n` (what a node deeper borrows inside that side is that side's own affair).
  int side = -1;
  for (int m = victim; m >= 0 && !path.count(m); m = tree_->node(m).parent) side = m;
  return side >= 0 && tree_->node(side).parent >= 0 && Borrows(side);
}

std::string QuotaTreeUse::Explain(int n, uint64_t cores, bool interactive) const {
  std::string path;
  for (int m = n; m >= 0; m = tree_->node(m).parent) {
    const QuotaTree::Node& node = tree_->node(m);
    path += (path.empty() ? "" : "; ") + node.name + " runs " + std::to_string(subtree_[m]) +
            " on nominal " + std::to_string(node.nominal_sum);
    if (node.borrowing_limit != kNoCoreCap) {
      path += " (borrowing at most " + std::to_string(node.borrowing_limit) + ")";
    }
  }
  const std::string& tenant = tree_->node(n).name;
  if (interactive && !WithinShare(n, cores)) {
    return "tenant " + tenant + "'s share of the account tree is used (" + path +
           "), and this session needs " + std::to_string(cores) +
           " more cores: sessions and services run only within their account's share, never "
           "on what others lend";
  }
  return "the account tree lets tenant " + tenant + " take " + std::to_string(Available(n)) +
         " more cores, and this job needs " + std::to_string(cores) + " (" + path + ")";
}

}  // namespace snn
