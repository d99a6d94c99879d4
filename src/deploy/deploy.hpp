#pragma once
// From the plan's pick to launch artefacts (docs/deploy.md). Compute first, render second:
// make_launch_spec() reads one role's pick into a plain LaunchSpec (every setting the estimate
// assumed, and every default a launcher needs that the plan does not know, as an assumption);
// render_launch() writes one target's files from it. Pure: no I/O.
//
// The flags and keys written are the documented ones of each tool; docs/deploy.md cites them.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.hpp"

namespace gpusel {

enum class DeployTarget { vllm, sglang, tensorrt_llm, torchrun, megatron, deepspeed, kubernetes, slurm };
inline constexpr DeployTarget all_deploy_targets[] = {
    DeployTarget::vllm,     DeployTarget::sglang,    DeployTarget::tensorrt_llm, DeployTarget::torchrun,
    DeployTarget::megatron, DeployTarget::deepspeed, DeployTarget::kubernetes,   DeployTarget::slurm};

std::string_view to_string(DeployTarget target);  // "vllm", "tensorrt-llm", ...
std::optional<DeployTarget> parse_deploy_target(std::string_view name);
std::vector<std::string> deploy_target_names();

// Serving engines serve inference roles; training launchers train; schedulers run either.
bool is_serving_target(DeployTarget target);
bool is_training_target(DeployTarget target);
// Why `target` does not launch `role` (e.g. "vllm serves inference roles; ..."); empty when it does.
std::string target_mismatch(DeployTarget target, Role role);

// Why `target` cannot launch this model (vLLM, SGLang, TensorRT-LLM and Megatron-LM's GPT run
// decoder LLMs only; TensorRT-LLM and Triton NVIDIA GPUs only); empty when it can.
struct LaunchSpec;
std::string model_mismatch(DeployTarget target, const LaunchSpec& spec);

// A value a launcher needs that the plan does not fix, and what was written instead.
struct LaunchAssumption {
    std::string setting;  // e.g. "container image"
    std::string value;    // what the artefact says, e.g. "vllm/vllm-openai:latest"
    std::string why;      // e.g. "the plan does not choose an image; pin a version"
};

struct LaunchSpec {
    // Provenance, for each artefact's opening comment.
    std::string plan_file;  // the workload or project file given
    std::string project;
    std::string workload;  // the role's workload name
    std::string gpusel_version;
    Role role = Role::inference;
    bool training = false;     // a training or fine-tuning workload (else inference)
    bool fine_tuning = false;  // kind fine-tuning: the run starts from the model's published weights
    std::string model;         // what the launcher loads: the Hugging Face id, or the preset's name
    std::string model_label;
    ModelSpec architecture;    // for launchers that build the model from flags (Megatron-LM)
    bool decoder_llm = false;  // a decoder transformer (dense or MoE): what LLM engines and Megatron's GPT run

    // Hardware.
    std::string gpu;  // catalog id
    std::string gpu_name;
    std::string vendor;  // catalog vendor: nvidia, amd, intel
    // The extended resource the vendor's Kubernetes device plugin advertises: nvidia.com/gpu,
    // amd.com/gpu (ROCm/k8s-device-plugin), habana.ai/gaudi (Habana device plugin).
    std::string gpu_resource = "nvidia.com/gpu";
    std::string node_product;         // the node label nvidia.com/gpu.product selects
    bool node_product_known = false;  // from the table of NVML names (gpu_product_label), not derived
    int gpus = 1;                     // in total, spares included
    int replicas = 1;                 // inference: copies of the model, spares included
    int spare_replicas = 0;
    int gpus_per_replica = 1;                      // tensor × pipeline parallel (inference); all GPUs (training)
    int gpus_per_node = 1;                         // GPUs of one node the job uses
    int nodes = 1;                                 // nodes per replica (inference) or for the job (training)
    NetworkKind interconnect = NetworkKind::pcie;  // what the plan assumed between nodes (or GPUs when one node)
    bool multi_node = false;

    // Layout and numerics.
    Layout layout;
    // Serving a MoE model: the expert-parallel degree the speed estimate ran (InferencePerf::
    // expert_parallel; layout.expert_parallel stays 1 for serving), what the engine's EP flag says.
    int expert_parallel = 1;
    Precision precision = Precision::bf16;
    WeightFormat weights = WeightFormat::bf16;
    KvCacheFormat kv_cache = KvCacheFormat::fp16;

    // Training.
    int micro_batch = 0;
    int gradient_accumulation = 1;
    int global_batch = 0;
    int seq_len = 0;
    int context_parallel = 1;  // training.context_parallel: GPUs of the data-parallel degree one sequence spans
    int virtual_stages = 1;    // model chunks per pipeline stage the estimate scheduled (interleaved 1F1B); 1 = plain
    int loader_workers = 0;    // DataLoader workers per training process the estimate assumed; 0 = none modelled
    Checkpointing checkpointing = Checkpointing::none;
    long long train_iterations = 0;  // optimizer steps of one run (dataset × epochs / global batch); 0 = unknown
    int lora_rank = 0;               // 0 = full fine-tuning
    std::string lora_targets;        // comma-separated module names

    // Serving (the engine's start-up arithmetic the memory estimate assumed).
    Engine engine = Engine::automatic;
    bool paged_engine = false;
    double memory_fraction = 0;  // gpu_memory_utilization, mem_fraction_static or free_gpu_memory_fraction
    int max_model_len = 0;
    int max_num_seqs = 0;
    int max_num_batched_tokens = 0;
    int block_size = 0;
    int batch = 0;    // concurrent sequences per replica the estimate served
    int clients = 0;  // closed-loop clients of the whole deployment (inference.concurrency), 0 = open loop
    int scheduler_recv_interval = 1;  // SGLang --scheduler-recv-interval the estimate ran (1 = not set)
    // The start-up settings of each paged engine for this GPU and layout, from the memory model
    // (memory.hpp, serving_memory): the plan's engine's are the fields above; a target engine
    // other than the plan's takes its own from here. Empty unless a decoder LLM is served.
    struct EngineSettings {
        Engine engine = Engine::vllm;
        double memory_fraction = 0;
        int max_model_len = 0;
        int max_num_seqs = 0;
        int max_num_batched_tokens = 0;
        int block_size = 0;
        bool fits = false;
        std::string refusal;
    };
    std::vector<EngineSettings> engine_settings;

    // The estimate.
    double memory_per_gpu_bytes = 0;
    double capacity_per_gpu_bytes = 0;
    std::string expected_speed;  // e.g. "7211 tok/s, P99 TPOT 22.1 ms"

    std::vector<LaunchAssumption> assumptions;

    // The role's prefill/decode split when the plan chose it or the workload fixed it
    // (plan/disaggregation.hpp): the sglang target then emits the PD launch (SGLang workers and
    // router, and NVIDIA Dynamo's) instead of co-located replicas.
    std::optional<DisaggregatedPlan> disaggregated;
};

// The settings of `role`'s pick; requires role.winner (the caller reports "nothing feasible"
// otherwise). `plan_file` is named in the comments.
LaunchSpec make_launch_spec(const PlanReport& report, const RolePlan& role, const Catalog& catalog,
                            const std::string& plan_file);

// `spec` with the serving settings of `engine` (LaunchSpec::engine_settings) in place of the
// plan's engine's; unchanged when `engine` is the plan's or has none.
LaunchSpec with_engine_settings(const LaunchSpec& spec, Engine engine);

// The GPU product label NVIDIA GPU feature discovery publishes for a catalog GPU: NVML's device
// name with spaces as '-'; known names from a table (sources in deploy.cpp), otherwise derived
// from the catalog name (`known` false: an assumption the caller prints).
struct NodeProduct {
    std::string value;
    bool known = false;
};
NodeProduct gpu_product_label(const GpuSpec& gpu);

// One file of a target: its name (no directory) and its whole content.
struct Artefact {
    std::string name;
    std::string content;
};

// The files of `target` for `spec`; the caller checked target_mismatch().
std::vector<Artefact> render_launch(DeployTarget target, const LaunchSpec& spec);

// ---------------------------------------------------------------------------------------
// Reading a launch back (consistency, docs/deploy.md "Checking a launch against the plan").

// What a launch file says, where it says it; absent fields were not found.
struct LaunchSettings {
    std::string kind;  // "vllm command line", "sglang command line", "kubernetes manifest", ...
    std::optional<int> tensor_parallel;
    std::optional<int> pipeline_parallel;
    std::optional<double> memory_fraction;
    std::optional<int> max_model_len;
    std::optional<int> max_num_seqs;
    std::optional<std::string> kv_cache_dtype;
    std::optional<std::string> quantization;
    std::optional<int> gpus_per_pod;              // kubernetes: nvidia.com/gpu limit of the GPU container
    std::optional<int> pods;                      // kubernetes: Deployment replicas, or Job parallelism
    std::optional<std::string> node_product;      // kubernetes: the nvidia.com/gpu.product selector
    std::optional<int> micro_batch;               // --micro-batch-size, --per_device_train_batch_size
    std::optional<int> gradient_accumulation;     // --gradient_accumulation_steps
    std::optional<int> global_batch;              // --global-batch-size
    std::optional<int> context_parallel;          // --context-parallel-size
    std::optional<int> virtual_stages;            // --num-virtual-stages-per-pipeline-rank
    std::optional<int> layers_per_virtual_stage;  // --num-layers-per-virtual-pipeline-stage
    std::optional<int> layers;                    // --num-layers
    bool megatron = false;  // a Megatron-LM parallelism argument was read: its defaults hold for the absent ones
    // Expert parallel: SGLang --ep-size/--ep/--expert-parallel-size, trtllm-serve --ep_size, or
    // vLLM's --enable-expert-parallel (EP over the replica's tensor-parallel GPUs: the TP size, 1 when absent).
    std::optional<int> expert_parallel;
    bool enable_expert_parallel = false;         // vLLM --enable-expert-parallel / -ep
    std::optional<int> scheduler_recv_interval;  // SGLang --scheduler-recv-interval

    // A prefill/decode launch (docs/deploy.md, "Prefill/decode disaggregation"): the worker
    // commands with --disaggregation-mode prefill|decode (SGLang launch_server or Dynamo's
    // dynamo.sglang), and the workers the SGLang router lists (--prefill/--decode URLs; absent
    // without a router, as Dynamo's workers register themselves).
    struct Worker {
        int line = 0;  // of the command
        std::optional<int> tensor_parallel;
        std::optional<int> expert_parallel;
        std::optional<int> max_num_seqs;  // --max-running-requests
        std::optional<int> max_model_len;
        std::optional<std::string> kv_cache_dtype;
        std::optional<std::string> quantization;
    };
    std::optional<Worker> prefill_worker;
    std::optional<Worker> decode_worker;
    std::optional<int> prefill_workers;
    std::optional<int> decode_workers;
    bool disaggregated() const { return prefill_worker.has_value() || decode_worker.has_value(); }
};

// Finds a `vllm serve`, `python -m sglang.launch_server`, `trtllm-serve`, `torchrun` or
// `deepspeed` command in shell text (backslash continuations and comments allowed), the prefill
// and decode workers of a PD launch (every command with --disaggregation-mode, and the SGLang
// router's worker list), or a Kubernetes manifest (YAML, documents
// separated by `---`), and reads the settings above. Throws InputError when neither is found or a
// value does not parse (file:line: message).
LaunchSettings read_launch_settings(std::string_view text, const std::string& file_name);

// Each contradiction of `settings` with `spec`, one sentence each ("tensor-parallel size 2; the
// plan assumed 1 ..."); empty when consistent. Settings absent from the launch are not findings,
// except the memory fraction and tensor-parallel size of a serving command, whose engine defaults
// the estimate may not have assumed, and a Megatron-LM command's context-parallel size and model
// chunks per pipeline stage, whose default (1) is what then runs. A PD launch is held to the
// plan's prefill/decode split (spec.disaggregated: each phase's tensor and expert parallel, the
// decode batch, the workers and GPUs the router lists); against a co-located pick it is one
// finding.
std::vector<std::string> compare_launch(const LaunchSpec& spec, const LaunchSettings& settings);

}  // namespace gpusel
