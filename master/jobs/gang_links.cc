#include "master/jobs/gang_links.h"

#include <algorithm>

#include "master/sched/gang_topology.h"

namespace snn {

std::vector<std::string> GangLinks(const NodeRegistry& nodes, const v1::JobRecord& job) {
  std::vector<std::string> links;
  const int n = std::min(job.tasks_size(), 8);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const v1::TaskRecord &ta = job.tasks(a), &tb = job.tasks(b);
      const NodeEntry* na = nodes.Find(ta.node());
      const NodeEntry* nb = nodes.Find(tb.node());
      if (na == nullptr || nb == nullptr) continue;
      links.push_back("task " + std::to_string(a) + " (" + ta.node() + "/" +
                      std::to_string(ta.board()) + ") - task " + std::to_string(b) + " (" +
                      tb.node() + "/" + std::to_string(tb.board()) +
                      "): " + DescribeCloseness(na->record, ta.board(), nb->record, tb.board()));
    }
  }
  return links;
}

}  // namespace snn
