#pragma once
// The planner's exhaustive search of training layouts on one GPU type: precision × recompute ×
// tensor × pipeline × data parallel × ZeRO stage × micro-batch. It keeps, for each GPU count, the
// fastest point that fits in memory (and meets the deadline when asked), which is also the
// cheapest at that count: every cost term (rent, power, interruptions) grows with the job's
// duration and none shrinks, so pricing only the fastest point per count loses nothing.
//
// Pruning, each step provably safe (docs/performance.md):
//  - memory is non-decreasing in the micro-batch among the micro-batches that accumulate
//    gradients over several passes (they stay resident) and among those that do not, so the
//    first micro-batch that does not fit ends the scan of its group; the scan goes on with the
//    first micro-batch that needs no accumulation, which may need less;
//  - a (tp, pp, dp) block whose compute-only throughput bound (CompiledTraining::
//    step_time_lower_bound_s) cannot beat the best point already found at the same GPU count is
//    skipped whole (not at a fixed count, where the accumulation steps may be rounded).
// The reference mode evaluates every point with the full estimators and prunes nothing; a test
// checks that both find the same winners.

#include <cstddef>
#include <optional>
#include <vector>

#include "catalog/catalog.hpp"
#include "inputs/layout.hpp"
#include "inputs/workload.hpp"
#include "perf/perf.hpp"

namespace gpusel {

// The precision a GPU runs a workload in: the workload's when native, else the nearest wider
// 16-bit or 32-bit format (mixed fp16 with loss scaling is how bf16 recipes run on Volta and Turing).
struct PrecisionChoice {
    Precision precision = Precision::bf16;
    bool fallback = false;
};

// Each of the workload's precision options that `gpu` runs natively, in the workload's order;
// when none is native, the fallback for the first; empty when the GPU can run none of them.
std::vector<PrecisionChoice> precision_choices(const Workload& workload, const GpuSpec& gpu);

// The recompute levels to try: the workload's options, or its one level.
std::vector<Checkpointing> checkpointing_choices(const Workload& workload);

struct TrainingSearchOptions {
    std::optional<int> fixed_count;  // evaluate this many GPUs only (gpusel check)
    bool require_deadline = true;    // a point that misses the deadline is not kept
    bool reference = false;          // full estimators, no pruning (tests)
};

// The fastest point found at one GPU count.
struct TrainingChoice {
    Layout layout;
    int micro_batch = 1;
    PrecisionChoice precision;
    Checkpointing checkpointing = Checkpointing::none;
    double samples_per_s = 0;
    double memory_total_bytes = 0;
    bool meets_deadline = true;
};

// The point of one constraint that came nearest to meeting it: the smallest needed / available.
struct NearMiss {
    double needed = 0;     // bytes per GPU (memory) or seconds to train (deadline)
    double available = 0;  // usable bytes per GPU, or training.deadline in seconds
    int count = 0;         // GPUs of that point
};

// Why points of the space were not kept, nearest per constraint (the planner weighs the two).
struct TrainingMiss {
    std::optional<NearMiss> memory;    // a point that did not fit
    std::optional<NearMiss> deadline;  // a point that fit but missed the deadline
    bool any() const { return memory.has_value() || deadline.has_value(); }
};

struct TrainingSearchResult {
    std::vector<TrainingChoice> best_per_count;  // ascending GPU count
    std::size_t space = 0;                       // points in the search space
    std::size_t evaluated = 0;                   // points whose memory (and, when it fits, speed) was computed
    std::size_t feasible = 0;                    // evaluated points that fit and meet the deadline
    TrainingMiss miss;
    // The point needing the least memory per GPU when none fits (for gpusel check's breakdown).
    std::optional<TrainingChoice> least_memory;
};

TrainingSearchResult search_training(const Workload& workload, const GpuSpec& gpu, const EfficiencyTable& efficiency,
                                     const TrainingSearchOptions& options);

}  // namespace gpusel
