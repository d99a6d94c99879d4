#pragma once
// Workload, project and proposal files (format 1; docs/workload.md). Every field but name,
// kind and model has a default; each default used is recorded as an Assumption so that
// reports can print it.

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "catalog/catalog.hpp"
#include "catalog/precision.hpp"
#include "inputs/models.hpp"

namespace gpusel {

enum class WorkloadKind { training, fine_tuning, inference };
enum class Role { development, training, inference };
enum class Optimizer { adamw, adam, sgd, sgd_momentum, adamw_8bit, adafactor, lion };
enum class Checkpointing { none, selective, full };
enum class Sharding { none, zero1, zero2, zero3 };  // "fsdp" reads as zero3
enum class Offload { none, optimizer, optimizer_and_params };
enum class Decode { none, cpu, gpu };
enum class Storage { hdd, sata_ssd, nvme, network, ram };
enum class DeploymentTarget { automatic, on_prem, cloud, hybrid, edge };
enum class NetworkKind { automatic, nvlink, pcie, infiniband, ethernet };
enum class Objective { tco, time, latency, throughput_per_usd, energy };
// What the training software does, where implementations differ in memory (docs/memory-model.md).
enum class LossKind { standard, chunked, fused };
enum class OptimizerStep { foreach, for_loop, fused };
enum class ZeroGrad { set_to_none, zero };
enum class GradientDtype { automatic, fp32 };
// The software stack; it sets the defaults of the fields above and of the runtime overheads.
enum class Framework { pytorch, pytorch_1, megatron, llm_c, llama_cpp };
enum class Allocator { caching, static_buffers };
// The serving engine of an inference workload (docs/memory-model.md, "Serving engines"). vLLM,
// SGLang and TensorRT-LLM size memory as a fraction of the device with a paged KV cache in the
// rest; llama.cpp and Hugging Face generate allocate per request. `automatic` = no engine model
// (encoders, non-transformers, training); decoder inference resolves it at load time.
enum class Engine { automatic, vllm, sglang, tensorrt_llm, llama_cpp, hf_generate };

std::string_view to_string(WorkloadKind kind);
std::string_view to_string(Role role);
std::string_view to_string(Optimizer optimizer);
std::string_view to_string(Checkpointing checkpointing);
std::string_view to_string(Sharding sharding);
std::string_view to_string(Offload offload);
std::string_view to_string(Objective objective);
std::string_view to_string(LossKind loss);
std::string_view to_string(OptimizerStep step);
std::string_view to_string(ZeroGrad zero_grad);
std::string_view to_string(GradientDtype dtype);
std::string_view to_string(Framework framework);
std::string_view to_string(Allocator allocator);
std::string_view to_string(Engine engine);
// True for the engines that preallocate a paged KV cache (vLLM, SGLang, TensorRT-LLM).
bool is_paged_engine(Engine engine);

// A default that shaped the answer, printed under "assumptions".
// cloud_reserved: a 1-year commitment (reserved_1y prices); cloud_reserved_3y: a 3-year one
// (reserved_3y); cloud_capacity_block: an AWS Capacity Block for ML, whole days booked and paid
// up front for a training job of known length (capacity_block prices).
enum class Acquisition {
    buy_new,
    buy_used,
    cloud_on_demand,
    cloud_spot,
    cloud_reserved,
    cloud_reserved_3y,
    cloud_capacity_block
};
std::string_view to_string(Acquisition acquisition);
// True when `acquisition` buys the GPUs (new or used: capex now, resale at the horizon's end);
// false for every rental.
bool is_purchase(Acquisition acquisition);

struct Assumption {
    std::string field;   // e.g. "deployment.pue"
    std::string value;   // as the user would write it, e.g. "1.4"
    std::string source;  // "default", or why it was derived (e.g. "from kind")
};

struct LoraSpec {
    int rank = 0;                      // 0 = no LoRA (full fine-tuning)
    std::vector<std::string> targets;  // module names, e.g. q_proj; or {"all-linear"}
    bool enabled() const { return rank > 0; }
};

struct TrainingSpec {
    Optimizer optimizer = Optimizer::adamw;
    bool master_weights = true;
    int micro_batch = 1;  // samples per GPU per forward pass (the first of the options)
    // The micro-batches the planner tries, ascending (`auto`: 1, 2, 4 … 64; `A..B`: every integer);
    // empty = micro_batch only. Single-layout commands use micro_batch.
    std::vector<int> micro_batch_options;
    int global_batch = 0;  // 0 = micro_batch × data-parallel degree
    int seq_len = 0;       // tokens per sample (transformers)
    Checkpointing checkpointing = Checkpointing::none;
    // Recompute levels the planner tries (`auto`: none, selective, full; or a list); empty =
    // checkpointing only. Single-layout commands use checkpointing (auto: selective).
    std::vector<Checkpointing> checkpointing_options;
    bool flash_attention = true;
    Sharding sharding = Sharding::none;
    bool sharding_given = false;  // false: the planner tries none and ZeRO 1-3
    Offload offload = Offload::none;
    int tensor_parallel = 0;    // 0 = auto
    int pipeline_parallel = 0;  // 0 = auto
    // Model chunks per pipeline stage (interleaved 1F1B, Narayanan et al. 2021): the bubble is
    // (p − 1)/v micro-batch slots at v× the point-to-point messages. 1 = plain 1F1B.
    int virtual_stages = 1;
    // The chunks the schedule can use at `stages` pipeline stages of a `layers`-layer model: the
    // interleaved schedule needs at least one layer per chunk, otherwise plain 1F1B (1).
    int scheduled_virtual_stages(int stages, int layers) const {
        const int chunks = std::max(1, virtual_stages);
        return stages <= 1 || chunks <= 1 || layers < stages * chunks ? 1 : chunks;
    }
    // GPUs one sequence is split over (context parallelism, ring attention: Megatron-Core
    // --context-parallel-size). They hold the same weights, so they count in the layout's
    // data-parallel degree: dp = sequence replicas × context_parallel. 1 = off.
    int context_parallel = 1;
    // Sequence replicas of a data-parallel degree: dp / context_parallel, at least 1. The global
    // batch is micro-batch × this × accumulation steps.
    int sequence_replicas(int data_parallel) const {
        return std::max(1, data_parallel / std::max(1, context_parallel));
    }
    LoraSpec lora;
    // Implementation choices that move the peak (defaults from runtime.framework):
    LossKind loss = LossKind::standard;                       // how the logits' cross-entropy is taken
    OptimizerStep optimizer_step = OptimizerStep::foreach;    // Adam/AdamW update kernel: its temporaries
    ZeroGrad zero_grad = ZeroGrad::set_to_none;               // gradients freed after the step, or kept as zeros
    GradientDtype gradient_dtype = GradientDtype::automatic;  // automatic = the trainable weights' dtype
    bool recompute_ffn_activation = false;                    // FFN activation function recomputed in backward
    double dataset_tokens = 0;
    double dataset_samples = 0;
    double epochs = 1;
    int runs = 1;                 // times the whole training is run over the horizon
    double deadline_seconds = 0;  // 0 = none
};

struct SloSpec {
    double ttft_seconds = 0;  // 0 = no target
    double tpot_seconds = 0;
    double e2e_seconds = 0;
    double percentile = 99;
};

// A request-length distribution (issue 37: fleets serve a mix of short and long requests).
// Written `{p50: 300, p90: 2000}` (a log-normal through both percentiles, discretised into
// bins) or `{histogram: [[tokens, share], ...]}`. Owned by plan/mix.cpp (docs/workload.md).
struct LengthDistribution {
    struct Bin {
        int tokens = 0;    // the bin's representative length
        double share = 0;  // of requests, (0, 1]; the shares of all bins sum to 1
    };
    std::vector<Bin> bins;  // ascending tokens; empty = a single length (InferenceSpec's int)
    int p50_tokens = 0;     // as written in the percentile form; 0 for a histogram
    int p90_tokens = 0;
    bool given() const { return !bins.empty(); }
    double mean_tokens() const;           // the shares' weighted mean; 0 when not given
    int quantile_tokens(double q) const;  // the smallest bin length whose cumulative share reaches q
};

// Load that moves over the day or week (issue 37; docs/cost-model.md, "Fleets over time"):
// `inference.load: {profile: [24 or 168 shares], peak_rps: 40, growth: 5%/mo}` or
// `{trace: requests.csv}` (requests per hour, one row per hour). Owned by plan/fleet.cpp.
struct LoadProfile {
    // The share of the peak in each hour, in [0, 1], the largest 1: 24 values (a day, repeated) or
    // 168 (a week from Monday 00:00). A trace is read into shares and peak_requests_per_s.
    std::vector<double> hourly_shares;
    double peak_requests_per_s = 0;  // the load at share 1 in the first month
    double growth_per_month = 0;     // compound growth of the whole profile, e.g. 0.05
    std::string trace_path;          // as written (resolved against the workload file); empty = profile
    bool given() const { return !hourly_shares.empty(); }
};

struct InferenceSpec {
    int input_tokens = 512;
    int output_tokens = 256;
    int batch = 0;            // 0 = auto
    int tensor_parallel = 0;  // GPUs one replica is split over; 0 = auto (the fewest that hold it)
    // MoE: GPUs one replica spreads its experts over (each expert whole on one GPU, tokens sent to
    // it by all-to-all); 0 = auto (the tensor-parallel degree on engines with expert parallelism),
    // 1 = none (experts split by tensor parallelism).
    int expert_parallel = 0;
    // Data-parallel attention (SGLang --enable-dp-attention): each tensor-parallel rank runs
    // attention for its own requests and keeps their KV cache alone, instead of all ranks sharing it.
    bool dp_attention = false;
    double requests_per_s = 1;
    // Closed-loop clients over the whole deployment, each sending its next request as soon as the
    // last one finishes (`vllm bench serve --max-concurrency N --request-rate inf`, SGLang
    // bench_serving): the load a benchmark drives. 0 = open loop at requests_per_s.
    int concurrency = 0;
    SloSpec slo;
    // Length distributions (optional): when given, input_tokens/output_tokens hold their mean
    // (rounded), which every single-configuration estimate runs at.
    LengthDistribution input_length;
    LengthDistribution output_length;
    // Load over the day (optional): when given, requests_per_s holds the largest hourly load of
    // the horizon (the peak × (1 + growth)^(months − 1) when it grows), which the single-type
    // plan sizes for, so that owning it all meets the SLO every hour; RolePlan::fleet prices the
    // hours. `load` excludes requests_per_s and concurrency in the file.
    LoadProfile load;
    // The load as reports name it: "64 clients" or "20 req/s".
    std::string load_text() const;
    // Diffusion models: denoising steps per image (one request = one image) and whether
    // classifier-free guidance runs the denoiser on a conditional and an unconditional input.
    int denoising_steps = 50;
    bool classifier_free_guidance = true;
};

// What an inference workload serves; it sets the units and the wording of every report.
//  - generation: a decoder generates tokens (TTFT, TPOT, $ per 1M output tokens)
//  - scoring: a decoder reads prompts without generating (prefill only, $ per 1M input tokens)
//  - encoder: embedding, classification, reranking (requests/s, $ per 1M input tokens)
//  - diffusion: denoising steps and a VAE decode per image (images/s, $ per 1k images)
//  - vision: CNNs and ViTs classifying or detecting (requests/s, $ per 1k requests)
//  - recommendation: embedding tables and MLPs, e.g. DLRM (requests/s, $ per 1k requests)
enum class InferenceTask { generation, scoring, encoder, diffusion, vision, recommendation };
std::string_view to_string(InferenceTask task);

struct DataSpec {
    bool given = false;  // true when the workload has a data: section
    // false: no input pipeline at all, not even the one assumed for image training without a
    // data: section (diagnose's speed of the GPUs when nothing starves them).
    bool modelled = true;
    double sample_bytes = 0;
    Decode decode = Decode::none;
    int cpu_cores = 16;
    double cpu_samples_per_s_per_core = 0;  // 0 = not limiting / unknown
    Storage storage = Storage::nvme;
    bool pin_memory = true;
    int loader_workers = 8;
};

// Prefill/decode disaggregation (issue 34 item 4; docs/perf-model.md, "Disaggregated serving"):
// `deployment.disaggregated: auto` lets the planner size prefill and decode workers;
// `{prefill: {gpu, count, tensor_parallel}, decode: {...}}` fixes them. Owned by
// plan/disaggregation.cpp.
struct DisaggregatedWorkers {
    std::string gpu;          // catalog id; empty = the planner chooses
    int count = 0;            // workers of this phase per replica; 0 = the planner sizes it
    int tensor_parallel = 0;  // GPUs per worker; 0 = the fewest that hold the model
    int expert_parallel = 0;  // 0 = as inference.expert_parallel
};
struct DisaggregationSpec {
    bool automatic = true;  // `auto`: every worker field chosen by the planner
    DisaggregatedWorkers prefill;
    DisaggregatedWorkers decode;
};

// The currency outputs are written in (issue 35 item 6): `deployment.currency: {code: EUR,
// per_usd: 0.86, as_of: 2026-11}` — the user's rate and its date; gpusel holds no rates.
struct CurrencySpec {
    std::string code = "USD";  // ISO 4217, upper case
    double per_usd = 1;        // units of `code` one US dollar buys
    std::string as_of;         // YYYY-MM or YYYY-MM-DD of the rate; empty for USD
    bool is_usd() const { return code == "USD"; }
};

struct DeploymentSpec {
    DeploymentTarget target = DeploymentTarget::automatic;
    double horizon_months = 24;
    double utilization = 0.7;
    double energy_usd_per_kwh = 0.12;
    double pue = 1.4;
    double ops_usd_per_gpu_month = 150;
    NetworkKind interconnect = NetworkKind::automatic;
    bool used_market = false;
    std::optional<Site> site;  // where owned hardware runs; empty = edge for edge targets, else datacenter
    // Extra runtime on spot capacity for interruptions (lost work since the last checkpoint and
    // restarts); see docs/cost-model.md for the basis.
    double spot_overhead_fraction = 0.10;
    bool spot_overhead_given = false;  // the file sets spot_overhead (else the 10 % estimate)
    // Rented serving capacity is billed for every provisioned hour; with autoscale, for the busy
    // share of the hours (utilization), but never fewer than min_replicas replicas.
    bool autoscale = false;
    int min_replicas = 1;
    // Spare serving capacity: none, n+1 (one replica more) or a fraction of the replicas needed.
    // Default: n+1 for inference roles (production serving), none otherwise.
    enum class Redundancy { none, n_plus_one, fraction };
    Redundancy redundancy = Redundancy::none;
    double redundancy_fraction = 0;
    int seats = 1;              // development roles: one box per engineer
    bool count_resale = false;  // subtract expected resale from the TCO that ranks candidates
    // Straight-line depreciation life of owned units, months; empty = data/cost.yaml's
    // depreciation.asset_life_months (docs/cost-model.md).
    std::optional<double> asset_life_months;
    // Prefill/decode disaggregation (issue 34 item 4): empty = co-located serving only.
    std::optional<DisaggregationSpec> disaggregated;
    // The currency of every output (issue 35 item 6); USD stays in JSON beside it.
    CurrencySpec currency;
    // Availability as a cost (issue 37 item 5; docs/cost-model.md, "Delivery and the wait"):
    // purchases must arrive by deliver_by (YYYY-MM) when ordered in order_date (YYYY-MM; default
    // the current month, printed). Empty deliver_by: lead times are not priced.
    std::string deliver_by;
    std::string order_date;
    bool ops_given = false;  // ops_per_gpu_month set in the file (else by site: docs/cost-model.md)
    bool pue_given = false;  // pue set in the file (else 1.0 away from a data centre)
};

// The software the job runs on. Sources for each framework's behaviour: docs/memory-model.md.
// Speculative decoding (docs/perf-model.md, "Speculative decoding"): a draft proposes
// draft_tokens tokens per sequence and step, the model verifies them in one pass; each draft
// token is accepted with probability `acceptance` when the ones before it were.
enum class SpeculativeMethod { none, mtp, eagle };
std::string_view to_string(SpeculativeMethod method);
struct SpeculativeSpec {
    SpeculativeMethod method = SpeculativeMethod::none;
    int draft_tokens = 0;   // tokens proposed per step, 1..16
    double acceptance = 0;  // per draft token, (0, 1)
    bool enabled() const { return method != SpeculativeMethod::none && draft_tokens > 0; }
    // Tokens one verify step yields per sequence on average: 1 + a + a² + … + a^draft_tokens
    // (the accepted prefix plus the model's own next token; Leviathan et al. 2023, eq. 1).
    double tokens_per_step() const;
};

struct RuntimeSpec {
    Framework framework = Framework::pytorch;
    double cuda_context_bytes = 0;  // measured context + library kernels; 0 = the framework's figure
    Allocator allocator = Allocator::caching;
    // Serving-engine knobs (names as vLLM spells them; docs/workload.md maps SGLang's and
    // TensorRT-LLM's). 0 = the engine's default for the GPU, resolved by the memory model.
    Engine engine = Engine::automatic;
    double gpu_memory_utilization = 0;  // vLLM; SGLang mem_fraction_static; TRT-LLM free_gpu_memory_fraction
    int max_model_len = 0;              // 0 = the workload's prompt + output tokens
    int max_num_seqs = 0;
    int max_num_batched_tokens = 0;
    int block_size = 0;  // tokens per KV block
    bool cuda_graphs = true;
    SpeculativeSpec speculative;
    // SGLang --scheduler-recv-interval: while it decodes, the scheduler takes new requests only
    // once per this many decode (or verify) steps; 1 = every step (the engine's default).
    int scheduler_recv_interval = 1;
};

struct BudgetSpec {
    double capex_usd = 0;    // 0 = no limit
    double monthly_usd = 0;  // 0 = no limit
};

struct ConstraintSpec {
    int max_gpus = 64;
    int gpus_per_node = 8;
    std::vector<std::string> allow;  // catalog ids; empty = all
    std::vector<std::string> deny;
    std::vector<Segment> segments;          // empty = all
    std::vector<FormFactor> form_factors;   // empty = all
    std::vector<std::string> vendors;       // nvidia, amd, intel, google; empty = all
    double max_power_per_device_watts = 0;  // 0 = no limit
    double memory_headroom_fraction = 0.10;
    // Offers (docs/catalog.md): where the GPUs may be bought or rented.
    std::vector<std::string> providers;          // provider ids; empty = all
    std::vector<std::string> exclude_providers;  // applied after `providers`
    std::vector<ProviderTier> tiers;             // empty = all (inference roles: hyperscaler, neocloud)
    std::vector<std::string> regions;            // region globs; empty = all
    std::vector<Acquisition> acquisitions;       // empty = all the deployment target allows
    bool allow_estimates = true;                 // false: only published, quoted or reported prices
    double max_offer_age_months = 36;            // offers dated longer before the catalog are left out
    double max_spot_age_months = 3;              // spot prices dated longer before it (or undated) do not rank
};

struct MemoryCalibrationPoint {
    std::string gpu;
    int micro_batch = 0;
    double peak_bytes = 0;
    std::string from;  // the file the figure was read from (`from:`), "" when typed
};

// A speed figure a measurement gives (calibration.speed[].metric). Rates are for all the GPUs
// measured together; ttft and tpot are seconds of one request alone on a replica.
enum class MeasuredMetric {
    training_tokens_per_s,
    samples_per_s,        // training samples/s, or inference requests/s at the batch
    output_tokens_per_s,  // inference: full batches of `batch` sequences per replica
    decode_tokens_per_s,  // 1 / TPOT of one request
    prefill_tokens_per_s,
    images_per_s,
    ttft,
    tpot,
};
std::string_view to_string(MeasuredMetric metric);

// One measured speed of this workload (docs/workload.md, `calibration`): typed in, or read from a
// vLLM benchmark result (`vllm_benchmark: FILE`, its output_throughput at max_concurrency).
struct SpeedCalibrationPoint {
    std::string gpu;
    int count = 1;  // GPUs measured together
    MeasuredMetric metric = MeasuredMetric::training_tokens_per_s;
    double measured = 0;  // per second, or seconds for ttft / tpot
    int batch = 0;        // inference batch per replica or training micro-batch; 0 = the workload's
    std::string from;     // the file the figure was read from, "" when typed
    // What ran when it was measured (`kind: training|inference`; gpusel calibrate writes it from
    // the file's format): samples_per_s is a training rate or an inference request rate, and a
    // training log must not calibrate a serving workload. unstated: as the workload is.
    enum class Run { unstated, training, inference };
    Run run = Run::unstated;
    Diagnostic where;  // file, position and path of the point, for errors found later
};

// What a paged serving engine measured at start-up on one GPU of a replica
// (calibration.serving_memory; vLLM's start-up log): bytes per GPU, 0 = not measured. The
// inference memory estimate takes them in place of its own terms on the same GPU and
// tensor-parallel size.
struct ServingMemoryCalibrationPoint {
    std::string gpu;
    int tensor_parallel = 1;
    double weights_bytes = 0;
    double activation_peak_bytes = 0;
    double non_torch_bytes = 0;
    long long kv_cache_tokens = 0;  // the pool the engine reported (per replica), 0 = not measured
    std::string from;               // the log the figures were read from, "" when typed
};

struct CalibrationSpec {
    std::vector<MemoryCalibrationPoint> memory;
    std::vector<SpeedCalibrationPoint> speed;  // also `throughput: [{gpu, batch, tokens_per_s}]`
    std::vector<ServingMemoryCalibrationPoint> serving_memory;
};

struct Workload {
    std::string name;
    std::string file;  // where it was read from ("" for inline or stdin)
    WorkloadKind kind = WorkloadKind::training;
    Role role = Role::training;
    ModelSpec model;
    std::string model_label;  // preset name or config file, for summaries
    Precision precision = Precision::bf16;
    // Compute precisions the planner tries where the GPU runs them natively (`precision: [bf16,
    // fp8]`); empty = precision only. precision is the first; single-layout commands use it.
    std::vector<Precision> precision_options;
    WeightFormat weights = WeightFormat::bf16;
    KvCacheFormat kv_cache = KvCacheFormat::fp16;
    TrainingSpec training;
    InferenceSpec inference;
    DataSpec data;
    DeploymentSpec deployment;
    RuntimeSpec runtime;
    BudgetSpec budget;
    ConstraintSpec constraints;
    Objective objective = Objective::tco;
    // objective.confidence: the share of the robustness scenarios (speed, price and memory
    // drawn from their bands) in which a pick must still meet memory, SLO, deadline and budget
    // as ordered; 0.5 to 0.99.
    double confidence = 0.9;
    CalibrationSpec calibration;
    std::vector<Assumption> assumptions;

    bool is_training() const { return kind != WorkloadKind::inference; }
    // What an inference workload serves, from the model's family and output_tokens.
    InferenceTask task() const;
    // Training of an image model (CNN, ViT, detector: model.input H×W×3) without a data:
    // section: its samples are assumed to be JPEG-class images decoded on the host's CPUs
    // (docs/perf-model.md, "Input pipeline"), not to arrive from nowhere.
    bool assumes_image_pipeline() const;
};

// When a workload of a project runs (issue 37 item 4; docs/cost-model.md, "Phases and a shared
// fleet"): `phases: [{workload: NAME, from: 2027-01, to: 2027-02}, ...]`, months inclusive. Month
// 1 is the earliest phase's first month. A phase sets its workload's deployment.horizon.
struct ProjectPhase {
    std::string workload;  // a workload name of the project
    std::string from;      // YYYY-MM, as written
    std::string to;        // YYYY-MM, as written
    int first_month = 0;   // 1-based over the project
    int last_month = 0;    // inclusive
    int months() const { return last_month - first_month + 1; }
};

struct Project {
    std::string name;
    std::string file;
    std::vector<Workload> workloads;
    std::vector<ProjectPhase> phases;  // empty = every workload over its own horizon, all at once
};

// The most GPUs one proposal line may give (count, or units × the offer's GPUs per unit): the
// largest count any reader accepts, and what bounds `gpusel check`'s work on the line (the
// counts it tries besides, check/assess.cpp, grow with the logarithm of the count).
inline constexpr int max_proposed_gpus = 1 << 20;

struct ProposedHardware {
    Role role = Role::inference;
    std::string gpu;
    int count = 1;      // GPUs in total; units × the offer's GPUs per unit when units is given
    std::string offer;  // an offer id; empty = the cheapest offer the count is whole units of
    int units = 0;      // units of `offer`; 0 = not given
    Acquisition acquisition = Acquisition::buy_new;
    std::optional<double> unit_price_usd;
    // Where each field stands in the proposal file, for annotations.
    Position entry_position, gpu_position, count_position, acquisition_position, unit_price_position, offer_position;
};

struct ProposalPolicy {
    double memory_headroom_fraction = 0.10;
    double max_overspend_fraction = 0.25;
    double min_saving_usd = 1000;  // overspend fails only when the cheaper option also saves at least this
    bool require_slo = true;
    bool warn_oversize = true;
    // Strict (policy.strict or `gpusel check --strict`): every warning fails the check (exit 1),
    // and a quoted unit price more than max_price_gap_fraction from the catalog's is an error.
    bool strict = false;
    double max_price_gap_fraction = 0.5;
};

struct Proposal {
    std::string name;
    std::string file;
    Project project;  // the workload(s) the proposal is for
    std::vector<ProposedHardware> hardware;
    ProposalPolicy policy;
};

// What a file is, judged by its top-level keys.
enum class DocumentKind { workload, project, proposal, catalog, models };

// Everything a loader needs besides the file itself.
struct LoadContext {
    const Catalog* catalog = nullptr;      // for id checks (allow/deny, calibration, proposal)
    const ModelLibrary* models = nullptr;  // for presets
    // model.hf: resolved from the Hugging Face cache, downloaded unless offline (hf_hub.hpp).
    bool hf_offline = false;
};

// Loaders. Each throws InputError listing every problem of the file (file:line:col: path:
// message), and never returns a partially valid value. `path` "-" reads standard input.
Workload load_workload_file(const std::string& path, const LoadContext& context);
Workload load_workload_text(std::string_view text, const std::string& file_name, const LoadContext& context);
Project load_project_file(const std::string& path, const LoadContext& context);
// A workload or a project file: a workload becomes a project of one.
Project load_plan_input_file(const std::string& path, const LoadContext& context);
Proposal load_proposal_file(const std::string& path, const LoadContext& context);

// `--calibration FILE` (docs/calibrate.md): the `calibration:` block of FILE (what `gpusel
// calibrate` writes), read as a workload's own block would be (paths in it relative to FILE,
// errors as FILE:line:col), its points appended to `workload.calibration`. Throws InputError.
void append_calibration_file(const std::string& path, Workload& workload, const LoadContext& context);

// Detects the kind of a file from its top-level keys. Throws InputError when the file
// cannot be parsed or matches no kind.
DocumentKind detect_document_kind(const std::string& path);

}  // namespace gpusel
