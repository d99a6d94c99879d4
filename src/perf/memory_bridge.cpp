// The performance model's only questions to memory: how large a batch fits, and whether the
// training state fits a layout. Both ask the memory estimator (include/gpusel/memory.hpp),
// so perf and `gpusel memory` never disagree about what fits.

#include <algorithm>

#include "memory/memory.hpp"
#include "memory/terms.hpp"
#include "perf/internal.hpp"

namespace gpusel {

namespace perf_detail {

namespace {

// The batch search stops here: far beyond any engine's concurrency limit.
constexpr int max_search_batch = 1 << 16;

double usable_bytes(const Workload& workload, const GpuSpec& gpu) {
    return gpu.memory_bytes * (1 - workload.constraints.memory_headroom_fraction);
}

}  // namespace

TrainingMemoryUse training_memory_use(const Workload& workload, const GpuSpec& gpu, const Layout& layout,
                                      Precision precision, Checkpointing checkpointing) {
    MemoryQuery query;
    query.layout = layout;
    query.precision = precision;
    query.checkpointing = checkpointing;
    const MemoryBreakdown memory = memory_breakdown(workload, gpu, query);
    const double states = memory.weights_bytes + memory.gradients_bytes + memory.optimizer_bytes;
    return {states, memory.activations_bytes, memory.total_bytes - states - memory.activations_bytes,
            usable_bytes(workload, gpu)};
}

bool training_state_fits(const Workload& workload, const GpuSpec& gpu, const Layout& layout, Precision precision,
                         Checkpointing checkpointing) {
    MemoryQuery query;
    query.layout = layout;
    query.precision = precision;
    query.checkpointing = checkpointing;
    return memory_breakdown(workload, gpu, query).total_bytes <= usable_bytes(workload, gpu);
}

}  // namespace perf_detail

int inference_batch_capacity(const Workload& workload, const GpuSpec& gpu, const Layout& layout,
                             std::optional<Precision> precision) {
    // A paged engine holds as many requests as its KV pool has blocks for, up to max_num_seqs.
    if (const std::optional<ServingMemory> serving = serving_memory(workload, gpu, layout, precision)) {
        return serving_concurrency(*serving, workload.inference.input_tokens + workload.inference.output_tokens);
    }
    const double usable = perf_detail::usable_bytes(workload, gpu);
    const auto fits = [&](int batch) {
        MemoryQuery query;
        query.layout = layout;
        query.batch = batch;
        query.precision = precision;
        return memory_breakdown(workload, gpu, query).total_bytes <= usable;
    };
    return memory_detail::largest_fitting(perf_detail::max_search_batch, fits);
}

}  // namespace gpusel
