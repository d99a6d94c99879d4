#pragma once
// Performance model: a roofline with measured efficiency, per phase. Pure.
// Equations and factors with sources: docs/perf-model.md, data/efficiency.yaml.
//
// Units: seconds, bytes, FLOPs, per-second rates. Every throughput in TrainingPerf and
// InferencePerf is for the whole candidate (all of its GPUs), every time is wall-clock.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "inputs/efficiency.hpp"
#include "inputs/layout.hpp"
#include "inputs/workload.hpp"
#include "perf/bottleneck.hpp"

namespace gpusel {

// `automatic` becomes llama.cpp for GGUF weights (q4_0, q4_k_m, q8_0) or runtime.engine llama.cpp,
// eager for runtime.engine hf-generate, and optimized otherwise (TensorRT / vLLM / ONNX Runtime /
// torch.compile class, for every kind of model). Other values pass through.
ServingStack resolve_stack(const Workload& workload, ServingStack requested);

// The engine name efficiency rules match (`engine:` in data/efficiency.yaml): `requested` when
// given (a name of known_engine_names(), from --stack or a validation case), else llama.cpp for the
// llama.cpp stack, hf-generate for eager, else the workload's runtime.engine ("" for auto).
std::string resolve_engine(const Workload& workload, ServingStack stack, std::string_view requested);

// ---------------------------------------------------------------------------------------
// Building blocks, exposed for tests and for the planner.

// Ring all-reduce of `bytes` over `ranks` GPUs: 2(n−1)/n · B / bw + 2(n−1) · latency.
double ring_all_reduce_s(double bytes, int ranks, double bytes_per_s, double latency_s = 0);
// Ring all-gather or reduce-scatter (B = the full, gathered size): (n−1)/n · B / bw + (n−1) · latency.
double ring_all_gather_s(double bytes, int ranks, double bytes_per_s, double latency_s = 0);
// Idle share of a pipeline with `stages` stages and `micro_batches` micro-batches per step
// (GPipe / 1F1B): (p−1) / (m + p − 1); with `virtual_stages` v model chunks per stage
// (interleaved 1F1B, Narayanan et al. 2021) the bubble is (p−1)/v slots: ((p−1)/v) / (m + (p−1)/v).
double pipeline_bubble_fraction(int stages, int micro_batches, int virtual_stages = 1);
// Time of a kernel bound by two resources: sqrt(compute² + memory²), which equals the
// roofline max() far from the ridge point and is 1.41× max() on it (docs/perf-model.md).
double roofline_time_s(double compute_s, double memory_s);

// What one GPU's GEMM kernels reach (docs/perf-model.md, "Inference"; anchors in
// docs/reference/perf_modelling.md §1.2).
struct GemmRates {
    double peak_flops_per_s = 0;       // dense peak of the GEMM's precision, FLOP/s
    double plateau = 0.7;              // fraction of that peak large GEMMs reach
    double half_work_s = 7.8e-6;       // GEMM work, in seconds at the dense peak, at which half the
                                       // plateau is reached (the half point in FLOPs grows with the peak)
    double bandwidth_bytes_per_s = 0;  // DRAM bandwidth reached streaming the weight, bytes/s
    double kernel_floor_s = 0;         // fixed time of any kernel, seconds
};
// Fraction of peak reached by a GEMM of F = 2·rows·columns·inner FLOPs (rows = tokens, columns =
// the weight's output width on this GPU): plateau · F / (F + half_work_s · peak). A faster GPU needs
// more work to fill its SMs, so it reaches the plateau later; compute time is F / (peak · plateau)
// + half_work_s / plateau.
double gemm_efficiency(double rows, double columns, double inner, const GemmRates& rates);
// Seconds of one GEMM (rows × inner) · (inner × columns) whose weight is `weight_bytes`:
// compute = 2·rows·columns·inner / (peak · gemm_efficiency), memory = weight_bytes / bandwidth
// + the kernel floor, combined as (compute³ + memory³)^(1/3) (max() far from the ridge).
double gemm_time_s(double rows, double columns, double inner, double weight_bytes, const GemmRates& rates);
// The same GEMM's time and its compute part (the latter alone tells which bound it runs at).
struct GemmTime {
    double time_s = 0;
    double compute_s = 0;
};
GemmTime gemm_timing(double rows, double columns, double inner, double weight_bytes, const GemmRates& rates);
// The training GEMM model (docs/perf-model.md, "Training"): the fraction of `peak_flops_per_s`
// a GEMM of m×n×k (2·m·n·k FLOPs = F) reaches, plateau · F / (F + peak · half_time_s). Large
// GEMMs approach the plateau; small and tensor-parallel-split ones fall short; a faster GPU
// needs a proportionally larger GEMM (F_half = peak · half_time) to reach the same fraction.
// Equivalently the GEMM costs F / (peak · plateau) plus a fixed half_time / plateau.
double gemm_efficiency_for_shape(double m, double n, double k, double peak_flops_per_s, double plateau,
                                 double half_time_s);
// What one training GEMM runs at: the peak of its precision, the curve above, the DRAM bandwidth
// its operands cross and the kernel floor.
struct TrainingGemmRates {
    double peak_flops_per_s = 0;
    double plateau = 0;
    double half_time_s = 0;
    double bytes_per_s = 0;    // achieved DRAM bandwidth
    double element_bytes = 2;  // operand element size
    double floor_s = 0;        // shortest kernel
};
// max(F / (peak · gemm_efficiency_for_shape), (m·k + k·n + m·n) · element / bandwidth, floor):
// a training GEMM reads and writes its activations as well as its weight (serving's gemm_time_s
// streams the weight alone, which is what decode steps are bound by).
double training_gemm_time_s(double m, double n, double k, const TrainingGemmRates& rates);

// A collective's cost on one tier, measured NCCL style: bus bandwidth (nccl-tests busbw), a
// small-message floor of the whole collective and a latency per ring step (tiers whose floor
// is not measured).
struct CollectiveLink {
    double bus_bytes_per_s = 0;
    double floor_s = 0;         // reached from 4 ranks on; (n−1)/3 of it below
    double step_latency_s = 0;  // per ring step
};
// All-reduce: 2(n−1)/n · B / busbw + floor · min(1, (n−1)/3) + 2(n−1) · step latency.
double all_reduce_s(double bytes, int ranks, const CollectiveLink& link);
// All-gather or reduce-scatter (B = the full, gathered size): (n−1)/n · B / busbw + floor ·
// min(1, (n−1)/3) + (n−1) · step latency.
double all_gather_s(double bytes, int ranks, const CollectiveLink& link);
// All-to-all in which each rank sends `bytes_sent` in all to the others (expert-parallel
// dispatch or combine): bytes_sent / busbw + floor · min(1, (n−1)/3) + step latency (all pairs
// at once, one step). 0 for one rank.
double all_to_all_s(double bytes_sent, int ranks, const CollectiveLink& link);

// Probability that an arrival waits in an M/M/c queue (Erlang C) with `servers` servers and
// offered load `load` = λ/μ (Erlangs). 1 when load >= servers; 0 when below 1e-30 (no
// percentile a report shows can see it).
double erlang_c_wait_probability(int servers, double load);

// The smallest fixed point x = map(x) at or above `from`, for an increasing `map` with
// map(from) >= from (the serving queue's decode concurrency: map(n) = λ·S_out·step(n)/(1 − ρ)),
// to 1e-9 relative; nullopt when it lies above `limit` or there is none. Plain iteration
// from `from` climbs to it (the definition); this reaches the same point in a few evaluations
// of `map` instead of tens.
std::optional<double> smallest_fixed_point(const std::function<double(double)>& map, double from, double limit);

// The smallest whole n >= from at which `holds` is true, for a `holds` that stays true once it
// is (replicas meeting an SLO): doubling from `from` until it holds, then halving the last step.
// nullopt when it does not hold by `most` (checked up to the first doubling at or past it).
std::optional<int> smallest_holding(int from, int most, const std::function<bool(int)>& holds);

// A communication tier: what a collective among a group of GPUs runs over.
struct LinkTier {
    std::string name;        // "nvlink4", "pcie4", "infiniband", "ethernet"
    double bytes_per_s = 0;  // achieved, unidirectional, per GPU
    double latency_s = 0;    // per collective step
    bool nvlink = false;     // the GPUs' own NVLink/Infinity Fabric domain, no other hop
    bool network = false;    // across nodes, limited by the NICs (not by a slower in-node hop)
};
// The link a group of `group_size` GPUs uses. Groups that fit in one node (gpus_per_node) and
// one NVLink domain use NVLink; other groups inside a node use PCIe; groups that span nodes
// are limited by the network (deployment.interconnect; auto = InfiniBand for SXM/OAM parts,
// Ethernet otherwise).
LinkTier link_for_group(const Workload& workload, const GpuSpec& gpu, int group_size, const EfficiencyFactors& factors,
                        const PlatformFactors& platform);
// The collective cost of a tier for training: inside an NVLink domain the measured NCCL bus
// bandwidth (unidirectional link × `collective_bus`) and floor (`collective_latency`); other
// tiers their achieved bandwidth and per-step latency (docs/perf-model.md, "Links").
CollectiveLink collective_link(const LinkTier& link, const GpuSpec& gpu, const EfficiencyFactors& factors);
// A group's GPUs in one node (`ranks_per_node`) run one ring per NIC: across nodes each ring
// crosses the network once per node, so the node's NICs together carry the ring's data and the
// per-GPU bus bandwidth of a network tier is ranks_per_node × one NIC's (NCCL rail-optimised
// rings; DGX/HGX give every GPU its own NIC). Other tiers are returned unchanged.
CollectiveLink spread_over_nics(CollectiveLink collective, const LinkTier& link, int ranks_per_node);

// Bytes of weights read per decode step, whole model (bits_per_weight of the stored format).
double weight_bytes(const Workload& workload);
// KV-cache bytes per token of context, whole model: 2 · L · kv_heads · head_dim · element size.
double kv_bytes_per_token(const Workload& workload);
// Parameters that take part in matrix multiplies for one token: active parameters minus the
// input embedding table unless it is tied to the output layer.
double matmul_params(const ModelSpec& model);

// ---------------------------------------------------------------------------------------
// Results.

// What one GPU of a training layout holds against what it may use, bytes: the weights, gradients
// and optimizer state; the activations of the micro-batch; the overheads (CUDA context, NCCL
// buffers, the allocator's reserve, which grows with both), to say what overflows.
struct TrainingMemoryUse {
    double states_bytes = 0;
    double activations_bytes = 0;
    double overhead_bytes = 0;
    double usable_bytes = 0;
};

struct TrainingPerf {
    double step_time_s = 0;
    double tokens_per_s = 0;  // whole candidate (0 for models without tokens)
    double samples_per_s = 0;
    double mfu = 0;                         // model FLOPs / (time × dense peak of the compute precision × GPUs)
    std::optional<double> time_to_train_s;  // absent without dataset_tokens / dataset_samples
    double scaling_efficiency = 1;          // 1 − (exposed communication + pipeline bubble) / step time
    bool meets_deadline = true;
    // Per optimizer step, one GPU:
    double compute_s = 0;        // forward + backward (+ recompute), incl. pipeline bubble
    double memory_s = 0;         // optimizer update and bandwidth-bound kernels (CNNs)
    double communication_s = 0;  // exposed (not overlapped) collectives
    double host_transfer_s = 0;  // offload traffic and input copies over PCIe, exposed
    double input_s = 0;          // input pipeline wait, exposed
    double overhead_s = 0;       // kernel launches not hidden (0: large training kernels hide them)
    double bubble_fraction = 0;
    double model_flops_per_step = 0;  // whole candidate
    double input_samples_per_s = 0;   // what the CPUs and storage deliver (0 = not limiting)
    // The input pipeline the estimate modelled: the workload's data: section, or the one assumed
    // for image training without it (given false); absent when none is modelled.
    std::optional<DataSpec> input_data;
    int micro_batch = 0;
    int gradient_accumulation = 1;
    int global_batch = 0;
    std::optional<TrainingMemoryUse> memory_use;  // set when the training state does not fit: what overflows
};

// The serving target that stops a higher load: the first to fail just above the largest load
// that meets them all, or the queues themselves (capacity) near the full-batch throughput.
enum class SloTarget {
    capacity,
    ttft,
    tpot,
    e2e,
};

// "capacity", "ttft", "tpot", "e2e": the names of the JSON output's binding_target.
std::string_view to_string(SloTarget target);

struct InferencePerf {
    double ttft_s = 0;                 // one request alone on a replica: its prefill
    double tpot_s = 0;                 // one request alone: one decode step at its mean context
    double output_tokens_per_s = 0;    // capacity: full batches of `batch` on every replica
    double prefill_tokens_per_s = 0;   // prompt tokens/s while prefilling a full batch
    double requests_per_s = 0;         // capacity in requests/s at `batch`
    std::optional<double> p99_ttft_s;  // at the offered load; absent when the load exceeds capacity
    std::optional<double> p99_tpot_s;
    std::optional<double> p99_e2e_s;
    double percentile = 99;  // the percentile the p99_* fields hold (slo.percentile)
    int batch = 0;           // concurrent sequences per replica
    int replicas = 1;
    // The expert-parallel degree the estimate ran a MoE model at (inference.expert_parallel
    // resolved: auto is the tensor parallel under DP attention, else 1; within the tensor
    // parallel and the experts); 1 for dense models. The layout's expert_parallel stays 1: the
    // memory model reads that one as a training split (docs/perf-model.md, "Expert parallelism").
    int expert_parallel = 1;
    int max_batch_memory = 0;  // largest batch the memory holds per replica
    bool fits = true;          // the weights fit in the replica's memory
    bool batch_fits = true;    // `batch` sequences' KV cache fits as well
    bool meets_slo = true;
    double max_requests_per_s_meeting_slo = 0;  // whole candidate
    int replicas_needed = 0;  // replicas that would meet the SLO at the offered load (0 = met or never)
    SloTarget binding_target = SloTarget::capacity;  // what stops a higher load
    bool memory_limits_load = false;                 // a larger batch than memory holds would raise that load ≥ 10 %
    double offered_requests_per_s = 0;
    double mean_concurrency = 0;  // sequences in flight per replica at the offered load
    // Closed-loop clients over the deployment (inference.concurrency), 0 for an open-loop load.
    // With clients, ttft_s and tpot_s are medians at that load (not one request alone),
    // requests_per_s and output_tokens_per_s what the clients get, offered_requests_per_s the
    // same rate, and max_requests_per_s_meeting_slo the rate at the most clients meeting the SLO.
    int concurrency = 0;
    // The full-batch step that sets capacity, one replica:
    double decode_step_s = 0;  // at `batch` sequences and the mean context
    double decode_compute_s = 0, decode_memory_s = 0, decode_overhead_s = 0, decode_communication_s = 0;
    double batch_prefill_s = 0;        // prefill of `batch` prompts together
    double decode_bytes_per_step = 0;  // per GPU: DRAM bytes of the step's kernels (weights, KV cache, activations)
    // What the time is bound by, one GPU: FLOPs of the full-batch decode step's kernels, bytes it
    // sends over its links (all-reduces, all-to-alls, stage hand-offs); the same for the prefill
    // of a full batch. The step times are never below bytes / bandwidth or FLOPs / peak.
    double decode_flops_per_step = 0;
    double decode_link_bytes_per_step = 0;
    double batch_prefill_bytes = 0;
    double batch_prefill_flops = 0;
    double batch_prefill_link_bytes = 0;
    double batch_prefill_communication_s = 0;
    // Diffusion: images/s at `batch` (= requests_per_s, one image per request), one denoising
    // step of the batch (CFG included) and the VAE decode of the batch.
    double images_per_s = 0;
    double denoising_step_s = 0;
    double vae_decode_s = 0;
};

// Numbers only: the bottleneck's detail and remedy are left empty for explain/explain.hpp
// (fill_bottleneck_explanation), which writes them from these fields.
struct PerfEstimate {
    std::optional<TrainingPerf> training;
    std::optional<InferencePerf> inference;
    Bottleneck bottleneck;
    Layout layout;
    ServingStack stack = ServingStack::optimized;
    Precision precision = Precision::bf16;  // the compute precision estimated at (the query's, else the workload's)
    std::vector<std::string> notes;
};

// precision and checkpointing are the compute precision and recompute level to estimate at (a
// planner's candidate): the same figures as a copy of the workload with those fields set.
struct PerfQuery {
    Layout layout;
    int micro_batch = 0;  // 0 = from workload
    int batch = 0;        // inference batch per replica; 0 = workload or the model's choice
    ServingStack stack = ServingStack::automatic;
    std::string engine;  // an engine of known_engine_names() the rules match; "" = resolve_engine's choice
    std::optional<Precision> precision;          // none = the workload's precision
    std::optional<Checkpointing> checkpointing;  // training: none = the workload's training.checkpointing
    // Inference: search the largest load that meets the SLO (max_requests_per_s_meeting_slo,
    // replicas_needed, binding_target, memory_limits_load). false: the latencies at the offered
    // load only, those four left at their defaults: a caller that probes many loads of one
    // configuration (the robustness analysis) needs no capacity search at each.
    bool search_capacity = true;
    // Inference, with search_capacity: where > 0, the caller asks only whether the largest load
    // meeting the SLO, times capacity_factor, reaches capacity_needed_rps (the planner's margin
    // replicas, one estimate per replica count tried). The bisection's bracket only narrows, so
    // it stops as soon as its lower end reaches the threshold or its upper end falls below it:
    // the answer is the full search's. max_requests_per_s_meeting_slo is then the lower end
    // (on the same side of the threshold as the full figure, not the figure);
    // replicas_needed, binding_target and memory_limits_load are left at their defaults; where
    // the offered load itself misses the SLO, nothing is searched (0).
    double capacity_needed_rps = 0;
    double capacity_factor = 1;
};

// Why `fitting_layout` found no layout; the words are the caller's (the CLI names its flags).
enum class LayoutProblem {
    none,
    no_gpus,                      // count < 1
    count_not_multiple_of_split,  // training: count is not a multiple of tensor × pipeline parallel
    replica_does_not_divide,      // inference: one replica needs replica_gpus, count is not a multiple
};

struct FittingLayout {
    Layout layout;  // meaningful when problem == none
    LayoutProblem problem = LayoutProblem::none;
    // The split that did not divide `count`: tensor × pipeline parallel (training) or the GPUs one
    // replica needs (inference, in replica_gpus).
    int tensor_parallel = 1;
    int pipeline_parallel = 1;
    int replica_gpus = 1;
    bool found() const { return problem == LayoutProblem::none; }
};

// The widest tensor-parallel split of one serving replica, a power of two: one NVLink domain
// (PCIe cards: one host's cards; edge modules: 1), at most constraints.gpus_per_node and 8. A
// replica that needs more GPUs spans nodes by pipeline stages of this width.
int widest_serving_tensor_parallel(const Workload& workload, const GpuSpec& gpu);

// A layout for `count` GPUs when the caller has none, checked against memory: the smallest model
// split that holds the workload, replicated over the rest. Training takes tensor/pipeline parallel
// from the workload (auto = 1, raised inside a node until the weights and optimizer state fit)
// and uses the rest as data parallel; inference shards the weights over the fewest GPUs that
// hold them (tensor parallel inside an NVLink domain, otherwise tensor parallel over PCIe, or
// layer split for llama.cpp; beyond the widest tensor-parallel split, pipeline stages across
// nodes) and uses the rest as replicas. Contrast `layout_as_written`
// (inputs/layout.hpp), which checks no fit. A problem, not a layout, when `count` cannot be
// divided that way.
FittingLayout fitting_layout(const Workload& workload, const GpuSpec& gpu, int count, ServingStack stack);

PerfEstimate estimate_perf(const Workload& workload, const GpuSpec& gpu, const PerfQuery& query,
                           const EfficiencyTable& efficiency);

// The largest inference batch per replica that memory holds at the workload's context
// (prompt + output), 0 when the weights do not fit. The one place the batch cap is computed.
// `precision`: the compute precision; none = the workload's.
int inference_batch_capacity(const Workload& workload, const GpuSpec& gpu, const Layout& layout,
                             std::optional<Precision> precision = std::nullopt);

}  // namespace gpusel
