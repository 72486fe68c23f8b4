// snnctl's policy commands: `policy show`, `queue set`, `tenant set`.
#pragma once

#include <ostream>

#include "cli/cli_options.h"

namespace snn {

int PolicyShow(const CliOptions& o, std::ostream& out, std::ostream& err);
int PolicySet(const CliOptions& o, std::ostream& out, std::ostream& err);
// `tenant add-user|remove-user TENANT USER...` (its coordinators, admins).
int TenantMembers(const CliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace snn
