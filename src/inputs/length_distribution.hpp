#pragma once
// Request-length distributions beyond the contract of inputs/workload.hpp (LengthDistribution;
// docs/workload.md, "Request lengths"): where a router splits the bins. workload_serving.cpp
// builds the bins and defines this.

#include <cstddef>

#include "inputs/workload.hpp"

namespace gpusel {

// The longest request bin `bin` holds, so the routing threshold "input ≤ N tokens" between it
// and the next: a histogram's bin, its own length; a log-normal's, the quantile at its upper edge
// (e.g. the 85–95 % bin: the 95th percentile); the last bin, its own length (nothing follows).
int length_bin_upper_tokens(const LengthDistribution& distribution, std::size_t bin);

}  // namespace gpusel
