#pragma once
// The planner's fast path for training: one workload on one GPU type reduced to the constants its
// per-GPU memory and step time depend on, so that a layout costs a few dozen floating-point
// operations instead of a full estimate (no strings, no notes, no allocation).
//
// The formulas are those of memory_breakdown() (src/memory/estimate.cpp, the nominal total) and
// estimate_perf() (src/perf/training.cpp), restricted to the cases compile() accepts; it returns
// nullopt for every other workload, which the planner then evaluates with the full estimators.
// tests/unit/test_compiled_training.cpp checks that both give the same figures (relative
// difference ≤ 1e-9) over every transformer preset and random layouts: a change to either
// estimator that is not mirrored here fails that test.

#include <optional>

#include "catalog/catalog.hpp"
#include "inputs/layout.hpp"
#include "inputs/workload.hpp"
#include "perf/perf.hpp"
#include "perf/training_ops.hpp"

namespace gpusel {

// One point of the search: a layout and a micro-batch. Degrees are ≥ 1.
struct TrainingPoint {
    int tensor_parallel = 1;
    int pipeline_parallel = 1;
    int data_parallel = 1;
    int micro_batch = 1;
    Sharding sharding = Sharding::none;

    int gpu_count() const { return tensor_parallel * pipeline_parallel * data_parallel; }
};

// What the layout-dependent part of an evaluation shares across shardings and micro-batches
// (communication tiers, activation bytes per sample); built once per (tp, pp, dp).
struct TrainingLayoutTerms {
    int tensor_parallel = 1;
    int pipeline_parallel = 1;
    int data_parallel = 1;
    int expert_parallel = 1;
    double shard_params = 0;                 // parameters on the most loaded rank before ZeRO
    double activation_bytes_per_sample = 0;  // activations (incl. logits) at micro-batch 1
    double output_layer_params = 0;          // gradients alive when backward starts (not resident)
    double largest_tensor_params = 0;        // a for-loop optimizer step's temporary
    double gather_bytes = 0;                 // ZeRO-3 gathered layers (when data parallel > 1)
    double nccl_bytes = 0;                   // communicator buffers
    double tensor_link_bytes_per_s = 0;
    double tensor_link_latency_s = 0;
    double pipeline_link_bytes_per_s = 0;
    double pipeline_link_latency_s = 0;
    double data_link_bytes_per_s = 0;
    double data_link_latency_s = 0;
    CollectiveLink tensor_collective;  // collective_link() of the tensor and data groups' tiers
    CollectiveLink data_collective;
    int virtual_stages = 1;               // effective_virtual_stages() of this pipeline degree
    double context_link_bytes_per_s = 0;  // the tp × cp group's tier (context parallelism's ring)
    double context_link_latency_s = 0;
};

struct TrainingPointResult {
    double memory_total_bytes = 0;  // memory_breakdown().total_bytes
    double step_time_s = 0;         // TrainingPerf::step_time_s
    double samples_per_s = 0;       // whole candidate
    double time_to_train_s = 0;     // 0 without a dataset size
    bool meets_deadline = true;
};

class CompiledTraining {
public:
    // nullopt unless: a training workload of a transformer (Korthikanti activations, not a
    // per-sample figure), no LoRA, no memory calibration points, no offload, no data: section (the
    // input pipeline), and a model with a speed estimate. `precision` and `checkpointing` are the
    // ones evaluated (none: `workload.precision` and `workload.training.checkpointing`), as a
    // MemoryQuery's and a PerfQuery's. The result refers to `workload`, which must outlive it.
    static std::optional<CompiledTraining> compile(const Workload& workload, const GpuSpec& gpu,
                                                   const EfficiencyTable& efficiency,
                                                   std::optional<Precision> precision = std::nullopt,
                                                   std::optional<Checkpointing> checkpointing = std::nullopt);

    TrainingLayoutTerms layout_terms(int tensor_parallel, int pipeline_parallel, int data_parallel) const;

    // Memory alone (the planner's first test; the step time is computed only when it fits).
    double memory_total_bytes(const TrainingLayoutTerms& terms, Sharding sharding, int micro_batch) const;
    // Step time, throughput and time to train. `micro_batch` × data parallel should divide the
    // global batch (otherwise the accumulation steps are rounded, as estimate_perf does).
    TrainingPointResult evaluate(const TrainingLayoutTerms& terms, Sharding sharding, int micro_batch) const;

    // A lower bound on the step time of any sharding and micro-batch b of this (tp, pp, dp) with
    // b × dp dividing the global batch: the pipeline's compute alone, (global/dp + (pp − 1)/v) ×
    // one sample's GEMM and attention FLOPs at their plateau rates / (tp·pp), without element-wise
    // kernels, communication and the optimizer step. Without a global batch (global = b × dp),
    // the bound for b = 1: (1 + (pp − 1)/v) × that; the step of micro-batch b is at least b times
    // that. A bound for pruning.
    double step_time_lower_bound_s(int tensor_parallel, int pipeline_parallel, int data_parallel) const;

    // The global batch a point runs (0 in the workload = micro-batch × sequence replicas, the
    // data parallel degree over context_parallel).
    int global_batch(int micro_batch, int data_parallel) const;

private:
    CompiledTraining() = default;

    struct Tier {
        double bytes_per_s = 0;
        double latency_s = 0;
        CollectiveLink collective;
    };
    Tier tier_for_group(int group_size) const;
    // The three parts of compile(), one per estimator function they mirror.
    void compile_memory(const Workload& workload);
    void compile_speed(const Workload& workload, const GpuSpec& gpu, const EfficiencyFactors& factors);
    void compile_links(const Workload& workload, const GpuSpec& gpu, const EfficiencyFactors& factors,
                       const PlatformFactors& platform);

    const Workload* m_workload = nullptr;
    const GpuSpec* m_gpu = nullptr;
    Precision m_precision = Precision::bf16;              // the one evaluated
    Checkpointing m_checkpointing = Checkpointing::none;  // the one evaluated
    // Model.
    double m_params = 0;
    double m_embedding = 0;
    double m_vocab_hidden = 0;  // V·h
    double m_dense_layer_params = 0;
    double m_expert_params = 0;
    double m_largest_layer = 0;
    double m_largest_matrix = 0;
    double m_layers = 0;
    double m_hidden = 0;
    double m_seq = 0;
    double m_sequence_tokens = 0;  // of one sequence on one GPU: seq / context_parallel
    int m_context_parallel = 1;
    double m_vocab = 0;
    double m_ffn_scratch_per_token = 0;  // top_k · ffn (recomputed FFN activation's buffer, before /t)
    int m_experts = 0;
    bool m_moe = false;
    bool m_logits_on_last_stage = false;  // decoder with a vocabulary (not an encoder)
    // Memory constants.
    double m_compute_bytes = 2;
    double m_weight_element = 2;
    double m_gradient_element = 2;
    double m_state_element = 4;
    double m_optimizer_bytes_per_param = 0;  // states + master copy
    double m_per_logit_bytes = 0;
    bool m_autocast_copy = false;
    bool m_adam_family = false;
    OptimizerStep m_optimizer_step = OptimizerStep::foreach;
    bool m_zero_grad_keeps = false;
    double m_context_bytes = 0;
    double m_reserve_fraction = 0;
    // Speed constants.
    perf_detail::TransformerTrainingOps m_ops;  // the per-operator model, as estimate_training builds it
    double m_tensor_share = 1;                  // exposed_tensor_share()
    double m_activation_element = 2;            // bytes of an activation exchanged by tensor/pipeline parallel
    double m_gradient_bytes_per_param = 2;
    double m_optimizer_traffic_per_param = 0;
    double m_bandwidth_bytes_per_s = 0;
    int m_tensor_all_reduces = 4;
    double m_samples_total = 0;
    double m_epochs = 1;
    double m_deadline_s = 0;
    // Communication tiers (link_for_group's cases).
    bool m_nvlink = false;
    int m_domain = 1;
    int m_node = 8;
    Tier m_nvlink_tier;
    Tier m_pcie_tier;
    Tier m_cross_node_tier;
    LinkTier m_cross_node_link;  // for spread_over_nics()
};

}  // namespace gpusel
