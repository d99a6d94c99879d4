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

// The longest request an engine must accept (its default max_model_len): input_tokens +
// output_tokens, or, where they are distributions, their longest bins.
int longest_request_tokens(const InferenceSpec& inference);

}  // namespace gpusel
