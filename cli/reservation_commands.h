// snnctl's advance reservations: reservation create (operators), reservation list, reservation
// delete (operators).
#pragma once

#include <ostream>

#include "cli/cli_options.h"

namespace snn {

int ReservationCreate(const CliOptions& o, std::ostream& out, std::ostream& err);
int ReservationList(const CliOptions& o, std::ostream& out, std::ostream& err);
int ReservationDelete(const CliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace snn
