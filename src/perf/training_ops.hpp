#pragma once
// The per-operator training model of the performance model, public to the layout search: a
// transformer layer's kernel shapes and rates, the time of one micro-batch, and the
// communication and schedule terms of a training step (docs/perf-model.md, "Training").
// estimate_training (perf/training.cpp) and CompiledTraining (search/compiled_training.cpp),
// which reduces the same model to per-workload constants, call these functions, so the search
// and `gpusel perf` time a step alike. Units: seconds (`_s`), bytes, FLOP/s (`_flops_per_s`),
// bytes/s (`_bytes_per_s`); widths and counts are plain numbers. The names stay in
// perf_detail: building blocks of the model, not an API for the report or the CLI.

#include <string>
#include <vector>

#include "perf/perf.hpp"

namespace gpusel::perf_detail {

// Bytes of optimizer traffic per trainable parameter per step (read and write of states,
// master copy, gradient and weights) when training in `precision`.
double optimizer_bytes_per_param(const Workload& workload, Precision precision);

// The per-operator training model of a transformer (docs/perf-model.md, "Training"): the
// shapes and rates of one layer's kernels, built once per workload and GPU. The planner's fast
// path (src/search/compiled_training.cpp) times micro-batches with the same function.
struct TransformerTrainingOps {
    bool valid = false;
    double layers = 0;
    double seq = 0;               // tokens a token attends over: the whole sequence
    double context_parallel = 1;  // GPUs one sequence is split over
    double sequence_tokens = 0;   // tokens of one sequence on one GPU: seq / context_parallel
    double hidden = 0;
    double kv_width = 0;                        // kv_heads · head_dim: what the ring exchange sends per K or V
    double qkv_width = 0;                       // N of the fused QKV projection
    double attention_width = 0;                 // heads · head_dim: K of the attention output projection
    double ffn_in_width = 0;                    // N of the FFN up (and gate) projection
    double ffn_width = 0;                       // K of the FFN down projection
    double vocab = 0;                           // logits GEMM (0 without a vocabulary)
    double attention_flops_per_token = 0;       // one layer's QKᵀ and AV, forward, before ÷ t
    double elementwise_elements_per_token = 0;  // one layer's element-wise reads + writes, forward
    double elementwise_kernels = 0;             // element-wise kernels per layer, forward
    double activation_bytes = 2;
    double gemm_passes = 3;     // forward, data gradient, weight gradient (2 under LoRA)
    double gemm_recompute = 0;  // forward passes recomputed in backward: full recompute 1
    double attention_recompute = 0;
    TrainingGemmRates gemm;
    double attention_flops_per_s = 0;
    double bandwidth_bytes_per_s = 0;
    double floor_s = 0;
    double lower_bound_sample_s = 0;  // a sample's FLOPs at the plateau on one GPU: a bound
};
// `precision` and `checkpointing`: what the workload trains at (the caller's choice, which may
// differ from workload.precision and workload.training.checkpointing).
TransformerTrainingOps transformer_training_ops(const Workload& workload, Precision precision,
                                                Checkpointing checkpointing, const GpuSpec& gpu,
                                                const EfficiencyFactors& factors, std::vector<std::string>& notes);
// One micro-batch on one GPU of tensor parallel `tp` and pipeline stage count `pp`: GEMMs and
// attention (compute) and element-wise kernels (memory), forward, backward and recompute.
struct MicroBatchTimes {
    double compute_s = 0;
    double memory_s = 0;
};
MicroBatchTimes transformer_micro_batch_times(const TransformerTrainingOps& ops, int tp, int pp, int micro_batch);
// Context parallelism's ring exchange of K and V per micro-batch that the attention kernels do not
// hide, seconds: each of the cp − 1 ring steps sends a chunk over `link` while the attention of
// the chunk in hand runs (Megatron-Core / Transformer Engine ring attention, P2P). 0 when cp = 1.
double context_parallel_exchange_s(const TransformerTrainingOps& ops, int tp, int pp, int micro_batch,
                                   double link_bytes_per_s, double link_latency_s);
// The virtual stages the schedule runs: the workload's when there are at least pp × v layers
// (uneven chunks allowed, as Megatron's first/last-stage options allow), else 1.
int effective_virtual_stages(const Workload& workload, int pp);
// Tensor-parallel collectives per micro-batch that the GPU waits for: 1, or 1 − tp_comm_overlap
// under Megatron (Transformer Engine userbuffer overlap).
double exposed_tensor_share(const Workload& workload, const EfficiencyFactors& factors);
// GPUs of one data-parallel group in a node: Megatron's rank order puts tensor parallel
// innermost, then data parallel, so a node holds gpus_per_node / tp of them (1 to dp).
int data_parallel_ranks_per_node(int gpus_per_node, int tp, int dp);
// Data-parallel gradient sync left exposed with chunked (per-layer) overlap: max(comm − hidden
// compute, one layer chunk of comm).
double exposed_after_overlap(double comm_s, double hiding_s, double layers_per_stage);

}  // namespace gpusel::perf_detail
