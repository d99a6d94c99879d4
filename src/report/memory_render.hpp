#pragma once
// Renderers of `gpusel memory`: the overview of every candidate GPU, the breakdown of one, and
// JSON format 1. Pure functions of the result: they format what estimate_memory() computed.

#include <iosfwd>
#include <string>
#include <vector>

#include "inputs/layout.hpp"
#include "inputs/workload.hpp"
#include "memory/memory.hpp"

namespace gpusel {

enum class MemoryFormat { table, json };

struct MemoryCandidate {
    std::string gpu_id;
    Layout layout;
    MemoryEstimate estimate;
};

// One workload estimated on `count` GPUs of each candidate type (at least one candidate).
struct MemoryResult {
    Workload workload;
    int count = 1;
    std::vector<MemoryCandidate> candidates;
};

struct MemoryStyle {
    bool quiet = false;  // --quiet: no legend under the overview, no assumptions under a breakdown
};

// One row per candidate: capacity, estimate, band, fits, headroom, largest batch; a legend
// unless quiet. GB = 1e9 bytes.
void render_memory_overview(const MemoryResult& result, std::ostream& out, const MemoryStyle& style);

// The first candidate's per-GPU breakdown by component with shares and bars, the largest batch
// that fits, the serving engine's budget when there is one, and the assumptions unless quiet.
void render_memory_breakdown(const MemoryResult& result, std::ostream& out, const MemoryStyle& style);

// JSON format 1: {format_version, workload, estimates: [one per candidate]}. Numbers follow the
// one JSON number policy (io/json_output.hpp): bytes whole, a value not computed null with a
// note in that estimate's notes.
void render_memory_json(const MemoryResult& result, std::ostream& out);

}  // namespace gpusel
