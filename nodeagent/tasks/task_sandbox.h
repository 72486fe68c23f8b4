// Who a task runs as, and the private files it gets. A task runs as the user who submitted its
// job (the uid and gid the master authenticated), with that user's groups on this node, never as
// the agent. Its directory is the agent's (root, 0711: a task can reach only what it is told
// of); its files in it (stdout, stderr, mapping, model, gateway token) and its working
// directory belong to the task's user alone (0600, 0700). Other users' tasks can read none of
// them, and the agent never follows a link a task planted.
// Thread contract: any thread; NSS lookups may block briefly (they do at launch only).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/base/status.h"
#include "proto/node.pb.h"

namespace snn {

struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary, from this node's group database
  std::string user;
  std::string home, shell;   // from the password database (the task's HOME and SHELL)
  bool switch_user = false;  // false: the agent is not root and runs tasks as itself
};

struct RunAsPolicy {
  bool allow_root = false;  // run root's jobs as root (snn-agent --allow_root_tasks)
  std::string node_name;    // for messages
};

// The user the task of `req` runs as on this node. Fails, with a line that says what to fix, for
// root's jobs unless allowed, a uid this node does not know, or a uid whose name here differs
// from the master's (the nodes and the master must share one user database).
Result<RunAs> ResolveRunAs(const v1::LaunchRequest& req, const RunAsPolicy& policy);

// "--user UID GID G1,G2,..." as snn-shepherd takes it ("-" for no supplementary groups).
std::vector<std::string> ShepherdUserArgs(const RunAs& who);

// Creates `dir` (root, 0711) and its `work` subdirectory owned by the task's user (0700). A
// `work` left by an earlier attempt is removed first, links and all, without following them.
Status PrepareTaskDir(const std::string& dir, const RunAs& who);
// A new, empty directory at `path` (whatever was there removed) that only `who` may use: the
// task's working directory, its output directory.
Status PrepareOutputDir(const std::string& path, const RunAs& who);

// Writes `content` to a new file `path` (an existing one is replaced) owned by the task's user,
// with `mode`. Never follows a link at `path`.
Status WritePrivateFile(const std::string& path, const std::string& content, const RunAs& who,
                        mode_t mode = 0600);

// Hands a file the agent wrote in the task's directory to the task's user, with `mode`.
Status GiveFile(const std::string& path, const RunAs& who, mode_t mode);

}  // namespace snn
