// snnctl simulate MODEL --inputs FILE --steps N --out FILE [--dt MS]: runs a model on this host
// with the simulated board's own engine (cli/host_network.h) and writes what its output layers
// gave. IN: lines "step,layer,neuron", a spike of an input layer's neuron at a step (a header
// line "step,..." and lines starting with # are skipped). OUT: "step,layer,neuron,value", each
// output spike (value 1) and, for an output that gives values (LI, I, an Output after
// operators), each non-zero value every step.
#pragma once

#include <ostream>

#include "cli/cli_options.h"

namespace snn {

int Simulate(const CliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace snn
