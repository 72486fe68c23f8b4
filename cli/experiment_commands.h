// snnctl experiment: the experiment services of a cluster, from a user's side.
//   experiment submit SERVICE MODEL RUN.json [--count N] [--wait]
//       sends N experiments (a model, JSON or NIR, and RUN.json's steps and inputs) to a
//       running service; prints their IDs; --wait: waits for them and prints their results.
//   experiment list SERVICE     the caller's experiments in the service: state, board time.
//   experiment results SERVICE EXPERIMENT
//       one experiment's output spikes (-o json: the whole record).
// SERVICE is the service's job ID; --service-tenant names its tenant when it is another's.
#pragma once

#include <ostream>

#include "cli/cli_options.h"

namespace snn {

int Experiment(const CliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace snn
