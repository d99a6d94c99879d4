// The performance model's only questions to memory: how large a batch fits, and whether the
// training state fits a layout.
//
// INTERIM: the memory estimator (include/gpusel/memory.hpp) is being written on another
// branch. Until it is merged these two functions use a coarse stand-in — weights, KV cache
// and training state against capacity less headroom and a fixed runtime overhead — and every
// estimate carries a note saying so. When memory lands, both switch to memory_breakdown()
// and nothing else in perf changes.

#include <algorithm>
#include <cmath>

#include "perf/internal.hpp"

namespace gpusel {

namespace perf_detail {

namespace {

// CUDA context plus cuBLAS/cuDNN workspaces: formulas.md gives 0.3–1.4 GB for the context;
// 1 GB is the middle of that range with a workspace on top.
constexpr double runtime_overhead_bytes = 1e9;

}  // namespace

double usable_memory_bytes(const Workload& workload, const GpuSpec& gpu) {
    return gpu.memory_bytes * (1 - workload.constraints.memory_headroom_fraction) - runtime_overhead_bytes;
}

bool training_state_fits(const Workload& workload, const GpuSpec& gpu, const Layout& layout) {
    const double params = workload.model.params;
    const int model_shards = layout.tensor_parallel * layout.pipeline_parallel;
    const int dp = layout.data_parallel;
    const bool lora = workload.training.lora.enabled();
    // Weights in the compute dtype; with LoRA only the adapters carry gradients and states.
    const double weights = params * bits_per_weight(workload.weights) / 8;
    const double trainable = lora ? 0.0 : params;
    const double grads = trainable * element_bytes(workload.precision == Precision::fp8 ? Precision::bf16 : workload.precision);
    const double states = trainable * (optimizer_bytes_per_param(workload) / 2);  // resident half of the traffic
    const Sharding sharding = workload.training.sharding;
    const double shard_states = sharding != Sharding::none ? dp : 1;
    const double shard_grads = sharding == Sharding::zero2 || sharding == Sharding::zero3 ? dp : 1;
    const double shard_weights = sharding == Sharding::zero3 ? dp : 1;
    const double per_gpu = (weights / shard_weights + grads / shard_grads + states / shard_states) / model_shards;
    return per_gpu <= usable_memory_bytes(workload, gpu) * 0.8;
}

}  // namespace perf_detail

int inference_batch_capacity(const Workload& workload, const GpuSpec& gpu, const Layout& layout) {
    const int shards = std::max(1, layout.tensor_parallel * layout.pipeline_parallel);
    // Resident weights include the input embedding table.
    const double resident_weights =
        workload.model.params * bits_per_weight(workload.weights) / 8 / shards;
    const double free_bytes = perf_detail::usable_memory_bytes(workload, gpu) - resident_weights;
    if (free_bytes <= 0) {
        return 0;
    }
    const double context = workload.inference.input_tokens + workload.inference.output_tokens;
    const double kv_per_sequence = kv_bytes_per_token(workload) * context / shards;
    if (kv_per_sequence <= 0) {
        // Non-transformers keep no KV cache: the activations of one sample bound the batch.
        const double per_sample = workload.model.activation_bytes_per_sample / 4 * element_bytes(workload.precision);
        if (per_sample <= 0) {
            return 1 << 16;
        }
        return static_cast<int>(std::min(1e6, std::floor(free_bytes / per_sample)));
    }
    return static_cast<int>(std::min(1e6, std::floor(free_bytes / kv_per_sequence)));
}

}  // namespace gpusel
