#pragma once
// The memory model's decision constants, loaded from data/memory.yaml (every value with its
// source and date). Data only: the memory estimator (memory/memory.hpp) applies them.

#include <string>
#include <string_view>

#include "inputs/dated_values.hpp"

namespace gpusel {

struct MemoryAssumptions {
    // Fraction of allocated bytes the PyTorch caching allocator holds on top (reserved −
    // allocated), nominal and the band's low and high ends: low <= nominal <= high.
    double allocator_reserve_fraction = 0;
    double allocator_reserve_fraction_low = 0;
    double allocator_reserve_fraction_high = 0;
    // Each value's source and date, by "section.key" as the file names it.
    DatedSources sources;
};

// Parses memory YAML (format in data/memory.yaml's header). Strict, as parse_cost_assumptions_text.
MemoryAssumptions parse_memory_assumptions_text(std::string_view text, const std::string& file_name);

// The assumptions compiled into the binary from data/memory.yaml, parsed on first use and kept.
const MemoryAssumptions& builtin_memory_assumptions();

}  // namespace gpusel
