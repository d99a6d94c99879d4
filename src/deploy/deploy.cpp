// The plan's pick as a LaunchSpec: what every target renders from (deploy.hpp).

#include "deploy/deploy.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/text.hpp"
#include "inputs/length_distribution.hpp"

namespace gpusel {

namespace {

constexpr std::pair<DeployTarget, std::string_view> target_names[] = {{DeployTarget::vllm, "vllm"},
                                                                      {DeployTarget::sglang, "sglang"},
                                                                      {DeployTarget::tensorrt_llm, "tensorrt-llm"},
                                                                      {DeployTarget::torchrun, "torchrun"},
                                                                      {DeployTarget::megatron, "megatron"},
                                                                      {DeployTarget::deepspeed, "deepspeed"},
                                                                      {DeployTarget::kubernetes, "kubernetes"},
                                                                      {DeployTarget::slurm, "slurm"}};

// NVML device names as drivers report them (nvidia-smi --query-gpu=name, torch.cuda.get_device_name),
// which GPU feature discovery publishes with spaces as '-' (k8s-device-plugin
// docs/gpu-feature-discovery/README.md, "Generated Labels": nvidia.com/gpu.product, e.g.
// A100-SXM4-40GB). Names seen in published logs: "NVIDIA A100-SXM4-80GB" (CUDA deviceQuery),
// "NVIDIA A100-PCIE-40GB" (Hugging Face model cards' env dumps), "NVIDIA H100 80GB HBM3" (Slurm job
// logs). Other GPUs fall back to the catalog name, printed as an assumption.
constexpr std::pair<std::string_view, std::string_view> known_products[] = {
    {"A100-80GB-SXM4", "NVIDIA-A100-SXM4-80GB"},
    {"A100-40GB-SXM4", "NVIDIA-A100-SXM4-40GB"},
    {"A100-40GB-PCIE", "NVIDIA-A100-PCIE-40GB"},
    {"H100-SXM5", "NVIDIA-H100-80GB-HBM3"},
};

// A Kubernetes label value: at most 63 characters of [A-Za-z0-9._-], alphanumeric at both ends
// (Kubernetes "Labels and Selectors", syntax and character set).
std::string label_value(std::string_view text) {
    std::string value;
    bool in_parentheses = false;
    for (const char c : text) {
        if (c == '(') {
            in_parentheses = true;
        } else if (c == ')') {
            in_parentheses = false;
        } else if (in_parentheses) {
            continue;
        } else if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_') {
            value += c;
        } else if (!value.empty() && value.back() != '-') {
            value += '-';
        }
    }
    if (value.size() > 63) {
        value.resize(63);
    }
    while (!value.empty() && std::isalnum(static_cast<unsigned char>(value.back())) == 0) {
        value.pop_back();
    }
    return value;
}

// The largest divisor of `gpus` that is at most `per_node`: torchrun and Slurm start the same
// number of processes on every node.
int gpus_per_node_for(int gpus, int per_node) {
    for (int candidate = std::min(gpus, std::max(per_node, 1)); candidate > 1; --candidate) {
        if (gpus % candidate == 0) {
            return candidate;
        }
    }
    return 1;
}

// The network between nodes that the performance model assumed (perf/building_blocks.cpp,
// link_for_group): the workload's, or InfiniBand for SXM/OAM parts and Ethernet otherwise.
NetworkKind inter_node_network(const Workload& workload, const GpuSpec& gpu) {
    const NetworkKind requested = workload.deployment.interconnect;
    if (requested == NetworkKind::infiniband || requested == NetworkKind::ethernet) {
        return requested;
    }
    const bool sxm = gpu.form_factor == FormFactor::sxm || gpu.form_factor == FormFactor::oam;
    return sxm ? NetworkKind::infiniband : NetworkKind::ethernet;
}

std::string expected_speed(const Candidate& pick) {
    if (pick.perf.training) {
        const TrainingPerf& perf = *pick.perf.training;
        std::string speed = perf.tokens_per_s > 0 ? format_rate(perf.tokens_per_s, "tok/s")
                                                  : format_rate(perf.samples_per_s, "samples/s");
        speed += fmt::format(", step {}", format_duration(perf.step_time_s));
        if (perf.time_to_train_s) {
            speed += fmt::format(", {} per run", format_duration(*perf.time_to_train_s));
        }
        return speed;
    }
    if (pick.perf.inference) {
        const InferencePerf& perf = *pick.perf.inference;
        std::string speed = perf.output_tokens_per_s > 0 ? format_rate(perf.output_tokens_per_s, "tok/s")
                                                         : format_rate(perf.requests_per_s, "req/s");
        if (perf.p99_tpot_s) {
            speed += fmt::format(", P{:g} TPOT {}", perf.percentile, format_duration(*perf.p99_tpot_s));
        }
        if (perf.p99_ttft_s) {
            speed += fmt::format(", P{:g} TTFT {}", perf.percentile, format_duration(*perf.p99_ttft_s));
        }
        return speed;
    }
    return "not estimated";
}

void fill_serving(LaunchSpec& spec, const Candidate& pick, const Workload& workload) {
    spec.engine = workload.runtime.engine;
    spec.paged_engine = pick.memory.serving.has_value();
    spec.batch = pick.batch;
    spec.clients = workload.inference.concurrency;
    spec.scheduler_recv_interval = workload.runtime.scheduler_recv_interval;
    // The EP the speed estimate ran, so that the engine runs it too (perf/inference.cpp resolves
    // inference.expert_parallel; the serving layout's expert_parallel stays 1).
    spec.expert_parallel = pick.perf.inference ? pick.perf.inference->expert_parallel : 1;
    if (pick.memory.serving) {
        const ServingMemory& serving = *pick.memory.serving;
        spec.memory_fraction = serving.memory_fraction;
        spec.max_model_len = serving.max_model_len;
        // The batch the estimate ran at, not the engine's limit: the engine admits up to
        // max_num_seqs sequences, and TPOT was estimated (and the batch chosen) at pick.batch.
        spec.max_num_seqs = pick.batch > 0 ? std::min(pick.batch, serving.max_num_seqs) : serving.max_num_seqs;
        spec.max_num_batched_tokens = serving.max_num_batched_tokens;
        spec.block_size = serving.block_size;
    } else {
        spec.max_model_len = longest_request_tokens(workload.inference);
        spec.max_num_seqs = std::max(pick.batch, 1);
    }
}

// Every paged engine's start-up arithmetic for the pick's GPU and layout, so that a target engine
// other than the plan's gets its own memory fraction and limits, not the plan engine's.
void fill_engine_settings(LaunchSpec& spec, const Workload& workload, const GpuSpec& gpu, const Layout& layout) {
    for (const Engine engine : {Engine::vllm, Engine::sglang, Engine::tensorrt_llm}) {
        Workload variant = workload;
        variant.runtime.engine = engine;
        const std::optional<ServingMemory> serving = serving_memory(variant, gpu, layout);
        if (!serving) {
            continue;
        }
        spec.engine_settings.push_back({engine, serving->memory_fraction, serving->max_model_len, serving->max_num_seqs,
                                        serving->max_num_batched_tokens, serving->block_size, serving->fits,
                                        serving->refusal});
    }
}

void fill_training(LaunchSpec& spec, const Candidate& pick, const Workload& workload) {
    spec.micro_batch = pick.micro_batch;
    spec.checkpointing = pick.checkpointing;
    spec.seq_len = workload.training.seq_len;
    spec.context_parallel = workload.training.context_parallel;
    spec.virtual_stages =
        workload.training.scheduled_virtual_stages(spec.layout.pipeline_parallel, workload.model.layers);
    if (pick.perf.training) {
        spec.gradient_accumulation = pick.perf.training->gradient_accumulation;
        spec.global_batch = pick.perf.training->global_batch;
        // The estimate's loader workers are per node; each GPU's process runs its share.
        if (const std::optional<DataSpec>& data = pick.perf.training->input_data) {
            const int workers = std::min(data->cpu_cores, std::max(1, data->loader_workers));
            spec.loader_workers = std::max(1, workers / std::max(1, spec.gpus_per_node));
        }
    }
    if (spec.global_batch <= 0) {
        spec.global_batch = spec.micro_batch * spec.layout.data_parallel * spec.gradient_accumulation;
    }
    const double samples = workload.training.dataset_samples > 0 ? workload.training.dataset_samples
                           : spec.seq_len > 0                    ? workload.training.dataset_tokens / spec.seq_len
                                                                 : 0;
    if (samples > 0 && spec.global_batch > 0) {
        spec.train_iterations =
            static_cast<long long>(std::ceil(samples * workload.training.epochs / spec.global_batch));
    }
    spec.lora_rank = workload.training.lora.rank;
    for (const std::string& target : workload.training.lora.targets) {
        spec.lora_targets += (spec.lora_targets.empty() ? "" : ",") + target;
    }
}

void add_general_assumptions(LaunchSpec& spec, const Workload& workload) {
    if (workload.model.hf_id.empty()) {
        spec.assumptions.push_back({"model", spec.model,
                                    "a gpusel preset name, not a checkpoint: replace it with the path or Hugging Face "
                                    "id of the weights the plan assumed (" +
                                        std::string(to_string(spec.weights)) + ")"});
    }
    if (spec.multi_node) {
        spec.assumptions.push_back(
            {"network between nodes", spec.interconnect == NetworkKind::infiniband ? "infiniband" : "ethernet",
             "what the speed estimate assumed (deployment.interconnect); the NCCL environment is set for it"});
    }
}

// Where the procurement orders something other than the pick's fleet (a chosen mixed fleet, an
// owned base plus a rented peak), the launch still describes one replica setup: say so.
void add_fleet_assumptions(LaunchSpec& spec, const RolePlan& role) {
    if (role.mix && role.mix->chosen && role.mix->parts.size() == 2) {
        const MixPart& shorter = role.mix->parts.front();
        const MixPart& longer = role.mix->parts.back();
        spec.assumptions.push_back(
            {"fleet", "mixed: " + role.mix->routing_rule,
             fmt::format("the plan orders {} × {} and {} × {} routed by prompt length; this launch is the single-type "
                         "pick's: launch each part on its GPUs behind a router applying the rule",
                         shorter.gpus, shorter.gpu, longer.gpus, longer.gpu)});
    } else if (role.fleet && role.fleet->ordered) {
        const FleetPlan& fleet = *role.fleet;
        spec.assumptions.push_back(
            {"fleet",
             fmt::format("{} owned replicas (+ {} spare), up to {} rented", fleet.chosen.owned_replicas,
                         fleet.spare_replicas, fleet.chosen.rented_replicas_at_peak),
             "the plan owns a base and rents the peak hour by hour: run this replica setup on the owned GPUs "
             "always and start rented replicas when the load passes the base (plan: fleet over the day)"});
    }
}

}  // namespace

std::string_view to_string(DeployTarget target) {
    for (const auto& [value, name] : target_names) {
        if (value == target) {
            return name;
        }
    }
    return "?";
}

std::optional<DeployTarget> parse_deploy_target(std::string_view name) {
    for (const auto& [value, text] : target_names) {
        if (equals_ignore_case(text, name)) {
            return value;
        }
    }
    return std::nullopt;
}

std::vector<std::string> deploy_target_names() {
    std::vector<std::string> names;
    for (const auto& [value, name] : target_names) {
        names.emplace_back(name);
    }
    return names;
}

bool is_serving_target(DeployTarget target) {
    return target == DeployTarget::vllm || target == DeployTarget::sglang || target == DeployTarget::tensorrt_llm;
}

bool is_training_target(DeployTarget target) {
    return target == DeployTarget::torchrun || target == DeployTarget::megatron || target == DeployTarget::deepspeed;
}

std::string target_mismatch(DeployTarget target, Role role) {
    if (is_serving_target(target) && role != Role::inference) {
        return fmt::format(
            "{} serves inference roles, not the {} role: use --target torchrun, megatron, deepspeed, "
            "kubernetes or slurm",
            to_string(target), to_string(role));
    }
    if (is_training_target(target) && role == Role::inference) {
        return fmt::format(
            "{} launches training, not the inference role: use --target vllm, sglang, tensorrt-llm, "
            "kubernetes or slurm",
            to_string(target));
    }
    return {};
}

std::string model_mismatch(DeployTarget target, const LaunchSpec& spec) {
    if ((is_serving_target(target) || target == DeployTarget::megatron) && !spec.decoder_llm) {
        return fmt::format("{} runs decoder LLMs; the model of workload {} ({}) is not one: use --target {}",
                           to_string(target), spec.workload, spec.model_label,
                           spec.training ? "torchrun, deepspeed, kubernetes or slurm" : "kubernetes or slurm");
    }
    if (target == DeployTarget::megatron && spec.lora_rank > 0) {
        // pretrain_gpt.py trains every weight and starts from random ones unless told to load a
        // checkpoint; adapters are a fine-tuning entry point's job (PEFT under HF Trainer).
        return fmt::format(
            "megatron launches pretrain_gpt.py, which trains every weight; workload {} is a LoRA fine-tune "
            "(rank {}): use --target torchrun or deepspeed (a PEFT fine-tuning script), kubernetes or slurm",
            spec.workload, spec.lora_rank);
    }
    if (target == DeployTarget::tensorrt_llm && spec.vendor != "nvidia") {
        return fmt::format(
            "tensorrt-llm runs on NVIDIA GPUs; the plan picked {} ({}): use --target vllm, sglang, "
            "kubernetes or slurm",
            spec.gpu, spec.vendor);
    }
    return {};
}

LaunchSpec with_engine_settings(const LaunchSpec& spec, Engine engine) {
    if (engine == spec.engine && spec.paged_engine) {
        return spec;
    }
    LaunchSpec result = spec;
    for (const LaunchSpec::EngineSettings& settings : spec.engine_settings) {
        if (settings.engine == engine) {
            result.memory_fraction = settings.memory_fraction;
            result.max_model_len = settings.max_model_len;
            result.max_num_seqs = spec.batch > 0 ? std::min(spec.batch, settings.max_num_seqs) : settings.max_num_seqs;
            result.max_num_batched_tokens = settings.max_num_batched_tokens;
            result.block_size = settings.block_size;
            result.paged_engine = true;
        }
    }
    return result;
}

NodeProduct gpu_product_label(const GpuSpec& gpu) {
    for (const auto& [id, product] : known_products) {
        if (equals_ignore_case(id, gpu.id)) {
            return {std::string(product), true};
        }
    }
    return {label_value(gpu.name.empty() ? gpu.id : gpu.name), false};
}

LaunchSpec make_launch_spec(const PlanReport& report, const RolePlan& role, const Catalog& catalog,
                            const std::string& plan_file) {
    if (!role.winner) {
        throw std::invalid_argument("make_launch_spec: the role has no pick");
    }
    const Candidate& pick = *role.winner;
    const Workload& workload = role.workload;
    const GpuSpec* gpu = catalog.find(pick.gpu);
    if (gpu == nullptr) {
        throw std::invalid_argument("make_launch_spec: the pick's GPU is not in the catalog");
    }
    LaunchSpec spec;
    spec.plan_file = plan_file;
    spec.project = report.project;
    spec.workload = workload.name;
    spec.gpusel_version = GPUSEL_VERSION;
    spec.role = role.role;
    spec.training = workload.is_training();
    spec.fine_tuning = workload.kind == WorkloadKind::fine_tuning;
    spec.model = workload.model.hf_id.empty() ? workload.model_label : workload.model.hf_id;
    spec.model_label = workload.model_label;
    spec.architecture = workload.model;
    spec.decoder_llm = workload.model.is_transformer() && (workload.model.family == ModelFamily::decoder ||
                                                           workload.model.family == ModelFamily::moe_decoder);
    spec.gpu = gpu->id;
    spec.gpu_name = gpu->name;
    spec.vendor = gpu->vendor;
    spec.gpu_resource = spec.vendor == "amd"     ? "amd.com/gpu"
                        : spec.vendor == "intel" ? "habana.ai/gaudi"
                                                 : "nvidia.com/gpu";
    const NodeProduct product = gpu_product_label(*gpu);
    spec.node_product = product.value;
    spec.node_product_known = product.known;
    spec.gpus = pick.count;
    spec.replicas = spec.training ? 1 : pick.replicas;
    spec.spare_replicas = pick.spare_replicas;
    spec.layout = pick.layout;
    spec.gpus_per_replica = spec.training ? pick.layout.gpu_count()
                                          : std::max(1, pick.layout.tensor_parallel * pick.layout.pipeline_parallel);
    spec.gpus_per_node = gpus_per_node_for(spec.gpus_per_replica, workload.constraints.gpus_per_node);
    spec.nodes = spec.gpus_per_replica / spec.gpus_per_node;
    spec.multi_node = spec.nodes > 1;
    spec.interconnect = inter_node_network(workload, *gpu);
    spec.precision = pick.precision;
    spec.weights = workload.weights;
    spec.kv_cache = workload.kv_cache;
    spec.memory_per_gpu_bytes = pick.memory.per_gpu.total_bytes;
    spec.capacity_per_gpu_bytes = pick.memory.capacity_bytes;
    spec.expected_speed = expected_speed(pick);
    if (spec.training) {
        fill_training(spec, pick, workload);
    } else {
        fill_serving(spec, pick, workload);
        if (spec.decoder_llm) {
            fill_engine_settings(spec, workload, *gpu, pick.layout);
        }
    }
    if (role.disaggregated && role.disaggregated->meets_slo &&
        (role.disaggregated->chosen || role.disaggregated->requested) && spec.decoder_llm) {
        spec.disaggregated = *role.disaggregated;
    }
    add_fleet_assumptions(spec, role);
    add_general_assumptions(spec, workload);
    return spec;
}

}  // namespace gpusel
