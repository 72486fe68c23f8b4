// snnctl's access tokens for the HTTP API: token create (needs MUNGE: a token cannot make
// tokens), token list, token revoke.
#pragma once

#include <ostream>

#include "cli/cli_options.h"

namespace snn {

int TokenCreate(const CliOptions& o, std::ostream& out, std::ostream& err);
int TokenList(const CliOptions& o, std::ostream& out, std::ostream& err);
int TokenRevoke(const CliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace snn
