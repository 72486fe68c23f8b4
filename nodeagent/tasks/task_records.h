// The agent's durable record of each task it started (DATA_DIR/tasks/<task>/task.pb): what an
// agent restarted on the same data dir re-attaches from. A task's command runs only once its
// record is saved, so no task ever runs that a later agent cannot find.
// FileTaskRecords is the real store; tests substitute one that fails (or dies) on demand.
// Thread contract: the agent's io thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/base/status.h"
#include "proto/node.pb.h"

namespace snn {

class TaskRecords {
 public:
  virtual ~TaskRecords() = default;
  // Saves the record at `file`, replacing any earlier one atomically.
  virtual Status Save(const std::string& file, const v1::AgentTaskRecord& record) = 0;
  virtual void Remove(const std::string& file) = 0;
  // Every record in the task directories under `root`, with its file. Unreadable ones are
  // logged and skipped.
  virtual std::vector<std::pair<std::string, v1::AgentTaskRecord>> LoadAll(
      const std::string& root) = 0;
};

class FileTaskRecords : public TaskRecords {
 public:
  Status Save(const std::string& file, const v1::AgentTaskRecord& record) override;
  void Remove(const std::string& file) override;
  std::vector<std::pair<std::string, v1::AgentTaskRecord>> LoadAll(
      const std::string& root) override;
};

}  // namespace snn
