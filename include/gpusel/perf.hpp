#pragma once
// Performance model: a roofline with measured efficiency, per phase. Pure.
// Equations and factors with sources: docs/perf-model.md, data/efficiency.yaml.
//
// Units: seconds, bytes, FLOPs, per-second rates. Every throughput in TrainingPerf and
// InferencePerf is for the whole candidate (all of its GPUs), every time is wall-clock.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusel/bottleneck.hpp"
#include "gpusel/catalog.hpp"
#include "gpusel/layout.hpp"
#include "gpusel/workload.hpp"

namespace gpusel {

// The software that runs the model. It sets the kernels' achieved fractions of peak and,
// for llama.cpp, the tensor-core accumulate mode and the dequantization pass.
//  - optimized: TensorRT-LLM, vLLM, SGLang, lmdeploy (fused kernels, CUDA graphs, paged KV);
//    for training: Megatron, NeMo, FSDP, DeepSpeed.
//  - llama_cpp: llama.cpp / GGUF (FP16-accumulate cuBLAS GEMMs on quantized weights that are
//    first dequantized to FP16, builds up to mid-2024).
//  - eager: PyTorch eager / Hugging Face without a serving engine.
enum class ServingStack { automatic, optimized, llama_cpp, eager };
std::string_view to_string(ServingStack stack);  // "auto", "optimized", "llama.cpp", "eager"
std::optional<ServingStack> parse_serving_stack(std::string_view name);
// `automatic` becomes llama.cpp for GGUF weights (q4_0, q4_k_m, q8_0), eager for inference of
// models that are not transformers, and optimized otherwise. Other values pass through.
ServingStack resolve_stack(const Workload& workload, ServingStack requested);

// DRAM technology class, from GpuSpec::memory_type ("HBM3" -> hbm, "GDDR6X" -> gddr).
enum class MemoryClass { hbm, gddr, lpddr, other };
std::string_view to_string(MemoryClass memory_class);
MemoryClass memory_class(const GpuSpec& gpu);

// Achieved fractions of peak and fixed overheads for one GPU and stack, resolved from
// data/efficiency.yaml. Defaults below are the file's `defaults` section; tests compare them.
struct EfficiencyFactors {
    // Training.
    double training_compute = 0.45;       // fraction of dense 16-bit peak on executed FLOPs, transformers
    double fp8_training_speedup = 1.3;    // end-to-end FP8 step speed-up over BF16 on the same GPU
    double cnn_flops_per_byte = 27;       // DRAM traffic of CNN training: FLOPs per byte moved
    double cnn_inference_flops_per_byte = 27;  // the same for CNN inference (fused engines move less)
    // Inference.
    double prefill_compute = 0.6;         // fraction of the 16-bit peak for large GEMMs
    double prefill_compute_8bit = 0.45;   // fraction of the FP8/INT8 peak for large GEMMs
    double prefill_half_tokens = 66;      // GEMM rows (tokens) at which half of that fraction is reached
    double decode_bandwidth = 0.84;       // fraction of DRAM bandwidth when streaming weights + KV
    double overhead_per_layer_s = 67e-6;  // per layer per forward pass (kernel launches, sync)
    double request_floor_s = 0;           // per request and batch, eager non-transformer inference
    // Communication.
    double interconnect = 0.75;           // fraction of unidirectional NVLink bandwidth
    double host_link = 0.78;              // fraction of nominal PCIe bandwidth (pinned memory)
    double network = 0.8;                 // fraction of NIC line rate between nodes
    double nvlink_latency_s = 10e-6;      // per collective
    double pcie_latency_s = 27e-6;
    double network_latency_s = 25e-6;

    std::vector<std::string> applied;     // labels of the file entries that set these values
};

// Everything data/efficiency.yaml holds besides the per-GPU factors.
struct PlatformFactors {
    double infiniband_bytes_per_s_per_gpu = 50e9;  // NDR 400 Gb/s, one port per GPU
    double ethernet_bytes_per_s_per_gpu = 12.5e9;  // 100 GbE per GPU
    // Sequential read bandwidth of each storage kind, bytes/s.
    std::map<Storage, double> storage_bytes_per_s;
    double pageable_copy_fraction = 0.5;           // pageable host memory vs pinned
};

struct EfficiencyRule {
    std::string label;                 // e.g. "hopper", "llama.cpp on hbm"
    std::string family;                // GpuSpec::architecture, lower case; empty = any
    std::optional<MemoryClass> memory;
    std::optional<ServingStack> stack;
    std::map<std::string, double> values;   // factor name -> value
    std::map<std::string, std::string> sources;
    int specificity() const;
};

struct EfficiencyTable {
    EfficiencyFactors defaults;
    std::vector<EfficiencyRule> rules;   // in file order
    PlatformFactors platform;

    // The defaults with every matching rule applied, least specific first, then file order.
    EfficiencyFactors resolve(const GpuSpec& gpu, ServingStack stack) const;
    EfficiencyFactors for_gpu(const GpuSpec& gpu) const { return resolve(gpu, ServingStack::optimized); }
};

// Parses efficiency YAML (format in data/efficiency.yaml's header). Strict: unknown keys,
// unknown factor names, values out of range and missing sources are InputErrors.
EfficiencyTable parse_efficiency_text(std::string_view text, const std::string& file_name);
// The table compiled into the binary from data/efficiency.yaml.
EfficiencyTable builtin_efficiency();

// ---------------------------------------------------------------------------------------
// Building blocks, exposed for tests and for the planner.

// Ring all-reduce of `bytes` over `ranks` GPUs: 2(n−1)/n · B / bw + 2(n−1) · latency.
double ring_all_reduce_s(double bytes, int ranks, double bytes_per_s, double latency_s = 0);
// Ring all-gather or reduce-scatter (B = the full, gathered size): (n−1)/n · B / bw + (n−1) · latency.
double ring_all_gather_s(double bytes, int ranks, double bytes_per_s, double latency_s = 0);
// Idle share of a pipeline with `stages` stages and `micro_batches` micro-batches per step
// (GPipe / 1F1B): (p−1) / (m + p − 1).
double pipeline_bubble_fraction(int stages, int micro_batches);
// Time of a kernel bound by two resources: sqrt(compute² + memory²), which equals the
// roofline max() far from the ridge point and is 1.41× max() on it (docs/perf-model.md).
double roofline_time_s(double compute_s, double memory_s);
// Fraction of peak reached by GEMMs with `rows` rows (tokens in the batch):
// peak_fraction · rows / (rows + half_rows).
double gemm_efficiency(double peak_fraction, double rows, double half_rows);
// Probability that an arrival waits in an M/M/c queue (Erlang C) with `servers` servers and
// offered load `load` = λ/μ (Erlangs). 1 when load >= servers.
double erlang_c_wait_probability(int servers, double load);

// A communication tier: what a collective among a group of GPUs runs over.
struct LinkTier {
    std::string name;        // "nvlink4", "pcie4", "infiniband", "ethernet"
    double bytes_per_s = 0;  // achieved, unidirectional, per GPU
    double latency_s = 0;    // per collective step
};
// The link a group of `group_size` GPUs uses. Groups that fit in one node (gpus_per_node) and
// one NVLink domain use NVLink; other groups inside a node use PCIe; groups that span nodes
// are limited by the network (deployment.interconnect; auto = InfiniBand for SXM/OAM parts,
// Ethernet otherwise).
LinkTier link_for_group(const Workload& workload, const GpuSpec& gpu, int group_size,
                        const EfficiencyFactors& factors, const PlatformFactors& platform);

// Bytes of weights read per decode step, whole model (bits_per_weight of the stored format).
double weight_bytes(const Workload& workload);
// KV-cache bytes per token of context, whole model: 2 · L · kv_heads · head_dim · element size.
double kv_bytes_per_token(const Workload& workload);
// Parameters that take part in matrix multiplies for one token: active parameters minus the
// input embedding table unless it is tied to the output layer.
double matmul_params(const ModelSpec& model);

// ---------------------------------------------------------------------------------------
// Results.

struct TrainingPerf {
    double step_time_s = 0;
    double tokens_per_s = 0;   // whole candidate (0 for models without tokens)
    double samples_per_s = 0;
    double mfu = 0;            // model FLOPs / (time × dense peak of the compute precision × GPUs)
    std::optional<double> time_to_train_s;  // absent without dataset_tokens / dataset_samples
    double scaling_efficiency = 1;    // 1 − (exposed communication + pipeline bubble) / step time
    bool meets_deadline = true;
    // Per optimizer step, one GPU:
    double compute_s = 0;             // forward + backward (+ recompute), incl. pipeline bubble
    double memory_s = 0;              // optimizer update and bandwidth-bound kernels (CNNs)
    double communication_s = 0;       // exposed (not overlapped) collectives
    double host_transfer_s = 0;       // offload traffic and input copies over PCIe, exposed
    double input_s = 0;               // input pipeline wait, exposed
    double overhead_s = 0;            // kernel launches not hidden (0: large training kernels hide them)
    double bubble_fraction = 0;
    double model_flops_per_step = 0;  // whole candidate
    double input_samples_per_s = 0;   // what the CPUs and storage deliver (0 = not limiting)
    int micro_batch = 0;
    int gradient_accumulation = 1;
    int global_batch = 0;
};

struct InferencePerf {
    double ttft_s = 0;                 // one request alone on a replica: its prefill
    double tpot_s = 0;                 // one request alone: one decode step at its mean context
    double output_tokens_per_s = 0;    // capacity: full batches of `batch` on every replica
    double prefill_tokens_per_s = 0;   // prompt tokens/s while prefilling a full batch
    double requests_per_s = 0;         // capacity in requests/s at `batch`
    std::optional<double> p99_ttft_s;  // at the offered load; absent when the load exceeds capacity
    std::optional<double> p99_tpot_s;
    std::optional<double> p99_e2e_s;
    double percentile = 99;            // the percentile the p99_* fields hold (slo.percentile)
    int batch = 0;                     // concurrent sequences per replica
    int replicas = 1;
    int max_batch_memory = 0;          // largest batch the memory holds per replica
    bool fits = true;                  // the weights fit in the replica's memory
    bool batch_fits = true;            // `batch` sequences' KV cache fits as well
    bool meets_slo = true;
    double max_requests_per_s_meeting_slo = 0;  // whole candidate
    int replicas_needed = 0;           // replicas that would meet the SLO at the offered load (0 = met or never)
    std::string binding_target;        // what stops a higher load: "ttft", "tpot", "e2e" or "capacity"
    bool memory_limits_load = false;   // a larger batch than memory holds would raise that load ≥ 10 %
    double offered_requests_per_s = 0;
    double mean_concurrency = 0;       // sequences in flight per replica at the offered load
    // The full-batch step that sets capacity, one replica:
    double decode_step_s = 0;          // at `batch` sequences and the mean context
    double decode_compute_s = 0, decode_memory_s = 0, decode_overhead_s = 0, decode_communication_s = 0;
    double batch_prefill_s = 0;        // prefill of `batch` prompts together
    double decode_bytes_per_step = 0;  // per GPU
};

struct PerfEstimate {
    std::optional<TrainingPerf> training;
    std::optional<InferencePerf> inference;
    Bottleneck bottleneck;
    Layout layout;
    ServingStack stack = ServingStack::optimized;
    std::vector<std::string> notes;
};

struct PerfQuery {
    Layout layout;
    int micro_batch = 0;  // 0 = from workload
    int batch = 0;        // inference batch per replica; 0 = workload or the model's choice
    ServingStack stack = ServingStack::automatic;
};

// A layout for `count` GPUs when the caller has none: training takes tensor/pipeline parallel
// from the workload (auto = 1, raised inside a node until the weights and optimizer state fit)
// and uses the rest as data parallel; inference shards the weights over the fewest GPUs that
// hold them (tensor parallel inside an NVLink domain, otherwise tensor parallel over PCIe, or
// layer split for llama.cpp) and uses the rest as replicas. Throws UsageError when `count`
// cannot be divided that way.
Layout default_layout(const Workload& workload, const GpuSpec& gpu, int count, ServingStack stack);

PerfEstimate estimate_perf(const Workload& workload, const GpuSpec& gpu, const PerfQuery& query,
                           const EfficiencyTable& efficiency);

// The largest inference batch per replica that memory holds at the workload's context
// (prompt + output), 0 when the weights do not fit. The one place the batch cap is computed.
int inference_batch_capacity(const Workload& workload, const GpuSpec& gpu, const Layout& layout);

}  // namespace gpusel
