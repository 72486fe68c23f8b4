#include "master/sched/fair_tree.h"

namespace snn {

std::map<std::string, ShareTerms, std::less<>> FairShareDownTheTree(
    const v1::SchedulingConfig& c, const std::vector<std::string_view>& working,
    const std::function<double(const std::string&)>& usage, double total) {
  struct Node {
    std::string name;
    double weight = 1;
    int parent = -1;
    std::vector<int> children;
    double subtree_usage = 0, share = 0, effective = 0;
  };
  std::vector<Node> nodes;
  std::map<std::string, int, std::less<>> index;
  for (const auto& t : c.tenants()) {
    index.emplace(t.name(), static_cast<int>(nodes.size()));
    Node n;
    n.name = t.name();
    n.weight = t.weight();
    nodes.push_back(std::move(n));
  }
  for (std::string_view w : working) {
    if (index.emplace(std::string(w), static_cast<int>(nodes.size())).second) {
      Node n;
      n.name = std::string(w);
      nodes.push_back(std::move(n));
    }
  }
  std::vector<int> top;
  for (int i = 0; i < c.tenants_size(); ++i) {
    auto p = index.find(c.tenants(i).parent());
    if (!c.tenants(i).parent().empty() && p != index.end()) {
      nodes[i].parent = p->second;
      nodes[p->second].children.push_back(i);
    }
  }
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    if (nodes[i].parent < 0) top.push_back(i);
  }
  std::vector<int> order = top;  // parents first
  for (size_t k = 0; k < order.size(); ++k) {
    for (int child : nodes[order[k]].children) order.push_back(child);
  }
  for (size_t k = order.size(); k-- > 0;) {
    Node& n = nodes[order[k]];
    n.subtree_usage += usage(n.name);
    if (n.parent >= 0) nodes[n.parent].subtree_usage += n.subtree_usage;
  }
  double top_weight = 0;
  for (int i : top) top_weight += nodes[i].weight;
  std::vector<double> children_weight(nodes.size());
  for (const Node& n : nodes) {
    if (n.parent >= 0) children_weight[n.parent] += n.weight;
  }
  for (int i : order) {
    Node& n = nodes[i];
    const double sum = n.parent < 0 ? top_weight : children_weight[n.parent];
    const double part = sum > 0 ? n.weight / sum : 0;
    const double used = total > 0 ? n.subtree_usage / total : 0;
    if (n.parent < 0) {
      n.share = part;
      n.effective = used;
    } else {
      const Node& p = nodes[n.parent];
      n.share = p.share * part;
      n.effective = used + (p.effective - used) * part;
    }
  }
  std::map<std::string, ShareTerms, std::less<>> out;
  for (std::string_view w : working) {
    const Node& n = nodes[index.find(w)->second];
    out[std::string(w)] = ShareTerms{n.effective, n.share};
  }
  return out;
}

}  // namespace snn
