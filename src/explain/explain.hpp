#pragma once
// Prose about a performance estimate, written from its typed result: the numbers that show the
// predicted bottleneck and the remedy that pays most. Pure; the one place these sentences are
// made (estimate_perf returns numbers only).

#include <string>

#include "catalog/catalog.hpp"
#include "inputs/workload.hpp"
#include "perf/perf.hpp"

namespace gpusel {

struct BottleneckExplanation {
    std::string detail;  // the numbers that show the bottleneck
    std::string remedy;  // the fix that pays most
};

// Detail and remedy of `estimate`, made by estimate_perf(workload, gpu, …) — the same workload
// and GPU. Reads the estimate's bottleneck (resource and phase), layout, stack and compute
// precision, and its training or inference figures; an estimate with neither says so and what
// to give. Never throws.
BottleneckExplanation explain_bottleneck(const Workload& workload, const GpuSpec& gpu, const PerfEstimate& estimate);

// explain_bottleneck, written into estimate.bottleneck.detail and .remedy (the fields renderers
// print).
void fill_bottleneck_explanation(const Workload& workload, const GpuSpec& gpu, PerfEstimate& estimate);

}  // namespace gpusel
