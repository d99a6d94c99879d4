#pragma once
// Memory estimator: per-GPU bytes by component for one workload on one GPU and layout.
// Pure. Terms and sources: docs/memory-model.md.

#include <string>
#include <vector>

#include "gpusel/catalog.hpp"
#include "gpusel/layout.hpp"
#include "gpusel/workload.hpp"

namespace gpusel {

// Bytes held by one GPU at peak, by component.
struct MemoryBreakdown {
    double weights_bytes = 0;
    double gradients_bytes = 0;
    double optimizer_bytes = 0;     // incl. fp32 master copy under mixed precision
    double activations_bytes = 0;   // incl. logits/loss and inference workspace
    double kv_cache_bytes = 0;
    double overhead_bytes = 0;      // CUDA context, library workspaces, allocator reserve, NCCL
    double allocated_bytes = 0;     // what torch.cuda.max_memory_allocated() would show
    double total_bytes = 0;         // what nvidia-smi would show: allocated + overhead
    double total_low_bytes = 0;     // uncertainty band of total_bytes
    double total_high_bytes = 0;
};

// What is being estimated. For training, micro_batch and seq_len come from the workload
// unless set here (> 0); for inference, batch and context_tokens likewise.
struct MemoryQuery {
    Layout layout;
    int micro_batch = 0;       // training: samples per GPU per pass; 0 = from workload
    int batch = 0;             // inference: concurrent sequences per replica; 0 = from workload or 1
    int context_tokens = 0;    // inference: tokens per sequence (prompt + output); 0 = from workload
    double headroom_fraction = -1;  // < 0: from the workload's constraints
};

struct MemoryEstimate {
    MemoryBreakdown per_gpu;
    double capacity_bytes = 0;
    bool fits = false;               // total_bytes <= capacity × (1 − headroom)
    double headroom_bytes = 0;       // capacity − total (negative when it does not fit)
    int max_micro_batch = 0;         // training: largest micro-batch that fits (0 = none)
    int max_batch = 0;               // inference: largest batch at the workload's context
    int max_context_tokens = 0;      // inference: largest context at the chosen batch
    std::vector<std::string> notes;  // assumptions and caveats, one sentence each
};

MemoryEstimate estimate_memory(const Workload& workload, const GpuSpec& gpu,
                               const MemoryQuery& query);

// Only the breakdown (no max-batch search); the planner's hot path.
MemoryBreakdown memory_breakdown(const Workload& workload, const GpuSpec& gpu,
                                 const MemoryQuery& query);

}  // namespace gpusel
