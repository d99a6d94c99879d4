// Acceptance of a delivered node against what a plan assumed (`gpusel verify --plan`): the plan
// JSON's pick read back, the node checks its layout implies, and the smoke test whose figure
// must land in the plan's speed band.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "catalog/precision.hpp"
#include "verify/verify.hpp"

namespace gpusel {

namespace {

using Json = nlohmann::json;

constexpr std::string_view plan_hint = "expected the output of gpusel plan --format json";

[[noreturn]] void missing(const std::string& file, const std::string& path, std::string_view what) {
    throw InputError(Diagnostic{file, {}, path, fmt::format("{}; {}", what, plan_hint)});
}

std::string join(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
}

const Json& member(const Json& object, const char* key, const std::string& file, const std::string& path) {
    const auto found = object.find(key);
    if (found == object.end()) {
        missing(file, join(path, key), "missing");
    }
    return *found;
}

int whole(const Json& object, const char* key, const std::string& file, const std::string& path, int minimum) {
    const Json& value = member(object, key, file, path);
    if (!value.is_number_integer() || value.get<long long>() < minimum || value.get<long long>() > (1 << 20)) {
        missing(file, join(path, key), fmt::format("not a whole number of at least {}", minimum));
    }
    return static_cast<int>(value.get<long long>());
}

double real(const Json& object, const char* key, const std::string& file, const std::string& path) {
    const Json& value = member(object, key, file, path);
    if (!value.is_number() || !std::isfinite(value.get<double>())) {
        missing(file, join(path, key), "not a number");
    }
    return value.get<double>();
}

std::string string_at(const Json& object, const char* key, const std::string& file, const std::string& path) {
    const Json& value = member(object, key, file, path);
    if (!value.is_string()) {
        missing(file, join(path, key), "not a string");
    }
    return value.get<std::string>();
}

const Json& object_at(const Json& object, const char* key, const std::string& file, const std::string& path) {
    const Json& value = member(object, key, file, path);
    if (!value.is_object()) {
        missing(file, join(path, key), "not an object");
    }
    return value;
}

// A JSON parse error's byte offset as line and column (1-based), for file:line:col.
Position position_of(std::string_view text, std::size_t byte) {
    Position position{1, 1};
    for (std::size_t i = 0; i < std::min(byte, text.size()); ++i) {
        if (text[i] == '\n') {
            ++position.line;
            position.column = 1;
        } else {
            ++position.column;
        }
    }
    return position;
}

std::string range_text(int first, int last) {
    return first == last ? fmt::format("GPU {}", first) : fmt::format("GPUs {}-{}", first, last);
}

std::string list_text(const std::vector<int>& values) {
    std::string list;
    for (std::size_t i = 0; i < values.size(); ++i) {
        list += (i == 0 ? "" : ", ") + std::to_string(values[i]);
    }
    return list;
}

bool has_nvlink(const GpuSpec& gpu) {
    return gpu.interconnect.kind.rfind("nvlink", 0) == 0 && gpu.interconnect.kind != "nvlink-bridge";
}

// GPUs of a node that talk in one collective: a serving replica's tensor-parallel group (its
// pipeline stages pass activations point to point, a small share), or for training the node's
// GPUs, whose tensor- and data-parallel all-reduces both run inside the node
// (perf/perf.hpp link_for_group: a group inside one node and NVLink domain uses NVLink).
int node_group_size(const PlanAssumption& plan) {
    const int group = plan.serving ? plan.tensor_parallel : plan.tensor_parallel * plan.data_parallel;
    return std::max(1, std::min(group, plan.gpus_per_node));
}

std::string group_name(const PlanAssumption& plan) {
    return plan.serving ? "tensor-parallel group" : "all-reduce group";
}

CheckResult check_gpu_count(const PlanAssumption& plan, const SmiReport& report) {
    const int nodes = (plan.count + plan.gpus_per_node - 1) / plan.gpus_per_node;
    CheckResult result{"gpu-count", CheckStatus::pass, fmt::format("{}", plan.gpus_per_node), "", "", 0};
    const int delivered = report.attached_gpus.value_or(static_cast<int>(report.gpus.size()));
    result.observed = fmt::format("{}", delivered);
    const std::string of_plan =
        nodes == 1 ? fmt::format("the plan's {} × {}", plan.count, plan.gpu)
                   : fmt::format("one of the plan's {} nodes of {} × {}", nodes, plan.gpus_per_node, plan.gpu);
    if (delivered < plan.gpus_per_node) {
        result.status = CheckStatus::fail;
        result.message = fmt::format("the node has {} GPU{}, {} needs {} on it", delivered, delivered == 1 ? "" : "s",
                                     of_plan, plan.gpus_per_node);
    } else if (delivered > plan.gpus_per_node) {
        result.status = CheckStatus::note;
        result.message =
            fmt::format("the node has {} GPUs, {} uses {}: the rest stay idle", delivered, of_plan, plan.gpus_per_node);
    } else {
        result.message = fmt::format("{} GPUs, as {} puts on a node", delivered, of_plan);
    }
    return result;
}

// GPUs 0..gpus-1 that nvlink -s shows with an inactive link or without link states; one problem
// sentence for each kind found.
int gpus_with_links_down(const std::vector<NvlinkGpu>& nvlink, int gpus, std::vector<std::string>& problems) {
    std::vector<int> down;      // GPUs with an inactive link
    std::vector<int> unlisted;  // GPUs nvlink -s does not list
    for (int index = 0; index < gpus; ++index) {
        const auto found = std::find_if(nvlink.begin(), nvlink.end(),
                                        [index](const NvlinkGpu& candidate) { return candidate.index == index; });
        if (found == nvlink.end() || found->links.empty()) {
            unlisted.push_back(index);
            continue;
        }
        const bool all_active =
            std::all_of(found->links.begin(), found->links.end(), [](const NvlinkLink& link) { return link.active; });
        if (!all_active) {
            down.push_back(index);
        }
    }
    if (!down.empty()) {
        problems.push_back(fmt::format("GPU{} {} {} inactive links (nvidia-smi nvlink -s)", down.size() == 1 ? "" : "s",
                                       list_text(down), down.size() == 1 ? "has" : "have"));
    }
    if (!unlisted.empty()) {
        problems.push_back(fmt::format("nvidia-smi nvlink -s lists no link states for GPU{} {}",
                                       unlisted.size() == 1 ? "" : "s", list_text(unlisted)));
    }
    return static_cast<int>(down.size() + unlisted.size());
}

// Pairs inside each of `groups` groups of `group` consecutive GPUs that topo -m does not show on
// NVLink (NV#); one problem sentence naming the first.
int pairs_off_nvlink(const Topology& topology, int group, int groups, std::vector<std::string>& problems) {
    int pairs_off = 0;
    std::string first;
    for (int start = 0; start < groups * group; start += group) {
        for (int a = start; a < start + group; ++a) {
            for (int b = a + 1; b < start + group; ++b) {
                const TopoLink* link = topology.gpu_link(a, b);
                if (link != nullptr && link->kind == LinkKind::nvlink) {
                    continue;
                }
                ++pairs_off;
                if (first.empty()) {
                    first = fmt::format("GPU{}-GPU{} {}", a, b, link == nullptr ? "absent" : link->text);
                }
            }
        }
    }
    if (pairs_off > 0) {
        problems.push_back(fmt::format("{} GPU pair{} of the group{} not on NVLink in nvidia-smi topo -m ({}{})",
                                       pairs_off, pairs_off == 1 ? " is" : "s are", groups == 1 ? "" : "s", first,
                                       pairs_off == 1 ? "" : ", ..."));
    }
    return pairs_off;
}

CheckResult check_plan_nvlink(const PlanAssumption& plan, const GpuSpec& gpu, const std::vector<NvlinkGpu>& nvlink,
                              const Topology* topology) {
    const int group = node_group_size(plan);
    CheckResult result{"plan-nvlink", CheckStatus::skip, "", "", "", 0};
    if (!has_nvlink(gpu)) {
        result.expected = "none";
        result.message = fmt::format("{} has no NVLink: the plan's collectives run over PCIe (numa-placement)", gpu.id);
        return result;
    }
    if (group <= 1) {
        result.expected = "none";
        result.message = fmt::format("the plan's layout (TP {}, {} GPU{} a node) has no collective on NVLink",
                                     plan.tensor_parallel, plan.gpus_per_node, plan.gpus_per_node == 1 ? "" : "s");
        return result;
    }
    const int groups = plan.gpus_per_node / group;
    result.expected = groups == 1 ? fmt::format("{} GPUs, every link", group)
                                  : fmt::format("{} × {} GPUs, every link", groups, group);
    if (nvlink.empty() && topology == nullptr) {
        result.message = fmt::format(
            "the plan's {} of {} GPUs runs on NVLink: pass nvidia-smi nvlink -s (--nvlink) or nvidia-smi topo -m "
            "(--topology)",
            group_name(plan), group);
        return result;
    }
    std::vector<std::string> problems;
    const int broken_gpus = nvlink.empty() ? 0 : gpus_with_links_down(nvlink, groups * group, problems);
    const int pairs_off = topology == nullptr ? 0 : pairs_off_nvlink(*topology, group, groups, problems);
    if (problems.empty()) {
        result.status = CheckStatus::pass;
        result.observed = "all up";
        result.message =
            fmt::format("every link of the {} {} up{}", group_name(plan), range_text(0, groups * group - 1),
                        topology != nullptr ? ", NVLink between every pair (topo -m)" : "");
        return result;
    }
    result.status = CheckStatus::fail;
    result.observed = broken_gpus > 0 ? fmt::format("{} of {} GPUs with links down", broken_gpus, groups * group)
                                      : fmt::format("{} pair{} off NVLink", pairs_off, pairs_off == 1 ? "" : "s");
    std::string joined;
    for (std::size_t i = 0; i < problems.size(); ++i) {
        joined += (i == 0 ? "" : "; ") + problems[i];
    }
    result.message = fmt::format(
        "{}: the plan's {} (TP {}) all-reduces over NVLink at every step; a GPU with links down slows the whole "
        "group to what is left of it. Check the NVSwitch trays and fabric manager before accepting",
        joined, group_name(plan), plan.tensor_parallel);
    return result;
}

CheckResult check_numa(const PlanAssumption& plan, const GpuSpec& gpu, const Topology* topology) {
    const int group = node_group_size(plan);
    CheckResult result{"numa-placement", CheckStatus::skip, "", "", "", 0};
    if (group <= 1) {
        result.expected = "any";
        result.message = "the plan's layout has no collective between GPUs of a node";
        return result;
    }
    const bool nvlink = has_nvlink(gpu);
    result.expected = nvlink ? "any (NVLink)" : "one NUMA node per group";
    if (topology == nullptr) {
        result.message = "pass nvidia-smi topo -m with --topology to check where the GPUs sit";
        return result;
    }
    const int groups = plan.gpus_per_node / group;
    std::vector<std::string> spans;
    std::vector<int> numa_nodes;
    for (int start = 0; start < groups * group; start += group) {
        std::vector<int> nodes;
        bool crosses = false;
        for (int a = start; a < start + group; ++a) {
            const TopoDevice* device = topology->gpu(a);
            if (device != nullptr && device->numa_node &&
                std::find(nodes.begin(), nodes.end(), *device->numa_node) == nodes.end()) {
                nodes.push_back(*device->numa_node);
            }
            for (int b = a + 1; b < start + group; ++b) {
                const TopoLink* link = topology->gpu_link(a, b);
                crosses = crosses || (link != nullptr && link->kind == LinkKind::sys);
            }
        }
        std::sort(nodes.begin(), nodes.end());
        if (nodes.size() > 1) {
            spans.push_back(
                fmt::format("{} span NUMA nodes {}", range_text(start, start + group - 1), list_text(nodes)));
        } else if (crosses) {
            spans.push_back(fmt::format("{} reach each other across the CPU interconnect (topo -m: SYS)",
                                        range_text(start, start + group - 1)));
        }
        numa_nodes.insert(numa_nodes.end(), nodes.begin(), nodes.end());
    }
    std::sort(numa_nodes.begin(), numa_nodes.end());
    numa_nodes.erase(std::unique(numa_nodes.begin(), numa_nodes.end()), numa_nodes.end());
    result.observed = numa_nodes.empty() ? "not printed" : fmt::format("NUMA {}", list_text(numa_nodes));
    if (spans.empty()) {
        result.status = CheckStatus::pass;
        result.message = numa_nodes.empty() ? "no group crosses the CPU interconnect (topo -m: no SYS link)"
                                            : fmt::format("each {} sits in one NUMA node", group_name(plan));
        return result;
    }
    std::string joined;
    for (std::size_t i = 0; i < spans.size(); ++i) {
        joined += (i == 0 ? "" : "; ") + spans[i];
    }
    if (nvlink) {
        // The group's all-reduce runs on NVLink; only host transfers cross sockets.
        result.status = CheckStatus::pass;
        result.message = fmt::format(
            "{}: fine, the {} talks over NVLink; pin each process to its GPU's NUMA node (CPU affinity in topo -m)",
            joined, group_name(plan));
        return result;
    }
    // Without NVLink the plan's group all-reduces over PCIe inside the host (perf model: PCIe
    // tier); across sockets the traffic also crosses the CPU interconnect (SYS), which the plan
    // did not assume.
    result.status = CheckStatus::fail;
    result.message = fmt::format(
        "{}: the plan's {} (TP {}) all-reduces over PCIe and assumed no hop across the CPU interconnect; place each "
        "group on GPUs of one NUMA node (CUDA_VISIBLE_DEVICES) or take a node that allows it",
        joined, group_name(plan), plan.tensor_parallel);
    return result;
}

std::string torch_dtype(std::string_view precision) {
    if (precision == "bf16") {
        return "bfloat16";
    }
    if (precision == "fp16") {
        return "float16";
    }
    return "";
}

}  // namespace

bool Acceptance::passed() const {
    const bool checks_pass =
        std::none_of(checks.begin(), checks.end(), [](const CheckResult& c) { return c.status == CheckStatus::fail; });
    return checks_pass && (!result || result->status != CheckStatus::fail);
}

PlanAssumption read_plan_assumption(std::string_view text, const std::string& file, const std::string& role) {
    Json document;
    try {
        document = Json::parse(text);
    } catch (const Json::parse_error& error) {
        throw InputError(Diagnostic{file, position_of(text, error.byte > 0 ? error.byte - 1 : 0), "",
                                    fmt::format("not JSON; {}", plan_hint)});
    }
    if (!document.is_object()) {
        missing(file, "", "not a JSON object");
    }
    const Json& roles = member(document, "roles", file, "");
    if (!roles.is_array()) {
        missing(file, "roles", "not a list");
    }
    std::vector<std::string> names;
    std::vector<std::size_t> with_winner;
    std::optional<std::size_t> chosen;
    for (std::size_t i = 0; i < roles.size(); ++i) {
        const std::string at = fmt::format("roles[{}]", i);
        if (!roles[i].is_object()) {
            missing(file, at, "not an object");
        }
        const std::string name = string_at(roles[i], "role", file, at);
        names.push_back(name);
        if (!member(roles[i], "winner", file, at).is_null()) {
            with_winner.push_back(i);
        }
        if (!role.empty() && name == role) {
            chosen = i;
        }
    }
    std::string listed;
    for (std::size_t i = 0; i < names.size(); ++i) {
        listed += (i == 0 ? "" : ", ") + names[i];
    }
    if (!role.empty() && !chosen) {
        throw UsageError(fmt::format("--role: {} has no role '{}'; it plans: {}", file, role, listed));
    }
    if (role.empty()) {
        if (with_winner.size() > 1) {
            throw UsageError(fmt::format("--role: {} plans {} roles ({}); name the one this node is for", file,
                                         with_winner.size(), listed));
        }
        if (with_winner.empty()) {
            missing(file, "roles", "no role has a winner (the plan found nothing feasible)");
        }
        chosen = with_winner.front();
    }
    const std::string role_at = fmt::format("roles[{}]", *chosen);
    const Json& entry = roles[*chosen];
    const Json& winner = member(entry, "winner", file, role_at);
    const std::string at = role_at + ".winner";
    if (!winner.is_object()) {
        missing(file, at, fmt::format("role {} has no winner (the plan found nothing feasible)", names[*chosen]));
    }
    PlanAssumption plan;
    plan.file = file;
    plan.role = names[*chosen];
    plan.workload = string_at(entry, "workload", file, role_at);
    if (const auto hf = entry.find("model_hf_id"); hf != entry.end() && hf->is_string()) {
        plan.model = hf->get<std::string>();
    }
    plan.gpu = string_at(winner, "gpu", file, at);
    plan.count = whole(winner, "count", file, at, 1);
    const Json& layout = object_at(winner, "layout", file, at);
    plan.tensor_parallel = whole(layout, "tensor_parallel", file, at + ".layout", 1);
    plan.pipeline_parallel = whole(layout, "pipeline_parallel", file, at + ".layout", 1);
    plan.data_parallel = whole(layout, "data_parallel", file, at + ".layout", 1);
    plan.precision = string_at(winner, "precision", file, at);
    const Json& offer = object_at(winner, "offer", file, at);
    plan.gpus_per_node = std::min(plan.count, whole(offer, "gpus_per_unit", file, at + ".offer", 1));
    const Json& perf = object_at(winner, "perf", file, at);
    const Json& inference = member(perf, "inference", file, at + ".perf");
    const Json& training = member(perf, "training", file, at + ".perf");
    const std::string perf_at = at + ".perf";
    if (inference.is_object()) {
        const std::string inference_at = perf_at + ".inference";
        plan.serving = true;
        plan.batch = whole(inference, "batch", file, inference_at, 1);
        plan.replicas = whole(inference, "replicas", file, inference_at, 1);
        const Json& concurrency = member(inference, "concurrency", file, inference_at);
        plan.concurrency = concurrency.is_null() ? 0 : whole(inference, "concurrency", file, inference_at, 1);
        const Json& input = member(inference, "input_tokens", file, inference_at);
        plan.input_tokens = input.is_null() ? 0 : whole(inference, "input_tokens", file, inference_at, 1);
        const Json& output = member(inference, "output_tokens", file, inference_at);
        plan.output_tokens = output.is_null() ? 0 : whole(inference, "output_tokens", file, inference_at, 1);
        const bool tokens = !member(inference, "output_tokens_per_s", file, inference_at).is_null();
        plan.figure = tokens ? "inference.output_tokens_per_s" : "inference.requests_per_s";
        plan.predicted = real(inference, tokens ? "output_tokens_per_s" : "requests_per_s", file, inference_at);
    } else if (training.is_object()) {
        plan.figure = "training.tokens_per_s";
        plan.predicted = real(training, "tokens_per_s", file, perf_at + ".training");
        plan.mfu = real(training, "mfu", file, perf_at + ".training");
    } else {
        missing(file, perf_at, "neither training nor inference is an object");
    }
    const Json& band = member(perf, "band", file, perf_at);
    if (band.is_object()) {
        const Json& figures = object_at(band, "figures", file, perf_at + ".band");
        if (const auto figure = figures.find(plan.figure); figure != figures.end() && figure->is_object()) {
            const std::string figure_at = fmt::format("{}.band.figures.{}", perf_at, plan.figure);
            plan.band_low = real(*figure, "low", file, figure_at);
            plan.band_high = real(*figure, "high", file, figure_at);
        }
    }
    return plan;
}

SmokeTest smoke_test(const PlanAssumption& plan, const GpuSpec& gpu) {
    SmokeTest smoke;
    if (plan.serving) {
        const int replica_gpus = plan.tensor_parallel * plan.pipeline_parallel;
        smoke.figure = plan.figure == "inference.output_tokens_per_s" ? "output tokens/s of one replica"
                                                                      : "requests/s of one replica";
        if (replica_gpus > plan.gpus_per_node) {
            smoke.basis = fmt::format(
                "one replica spans {} GPUs, more than a node's {}: benchmark it across its nodes; gpusel gives no "
                "single-node smoke test",
                replica_gpus, plan.gpus_per_node);
            return smoke;
        }
        if (plan.figure != "inference.output_tokens_per_s" || plan.output_tokens == 0 || plan.input_tokens == 0) {
            smoke.basis =
                "the workload generates no tokens: vllm bench serve does not measure it; gpusel gives no "
                "smoke test";
            return smoke;
        }
        // Clients per replica: closed-loop clients share the replicas evenly; an open-loop plan's
        // capacity is full batches of `batch` on every replica (perf/perf.hpp InferencePerf).
        const int clients = plan.concurrency > 0 ? (plan.concurrency + plan.replicas - 1) / plan.replicas : plan.batch;
        // Ten requests per client, as SemiAnalysis InferenceX's nightly serving sweeps run
        // (`--num-prompts 10×CONC --request-rate inf --ignore-eos`, SemiAnalysisAI/InferenceX
        // benchmarks/benchmark_lib.sh): the ramp-up and drain at the run's ends are then a small
        // share of it.
        const int prompts = 10 * clients;
        smoke.kind = "vllm-bench-serve";
        smoke.result_key = "output_throughput";
        smoke.command = fmt::format(
            "vllm bench serve --model {} --dataset-name random --random-input-len {} --random-output-len {} "
            "--ignore-eos --max-concurrency {} --request-rate inf --num-prompts {} --save-result "
            "--result-filename smoke.json",
            plan.model.empty() ? "MODEL" : plan.model, plan.input_tokens, plan.output_tokens, clients, prompts);
        smoke.predicted = plan.predicted / plan.replicas;
        smoke.low = plan.band_low / plan.replicas;
        smoke.high = plan.band_high / plan.replicas;
        smoke.basis = fmt::format(
            "against one replica (TP {}, PP {}) served as the plan's launch (gpusel deploy) on {}: the plan's {} of "
            "{:.0f} tokens/s and its band {:.0f}-{:.0f}{}",
            plan.tensor_parallel, plan.pipeline_parallel, range_text(0, replica_gpus - 1), plan.figure, plan.predicted,
            plan.band_low, plan.band_high,
            plan.replicas == 1 ? std::string(", one replica")
                               : fmt::format(" over {} replicas, divided by {}", plan.replicas, plan.replicas));
        if (plan.model.empty()) {
            smoke.basis += "; replace MODEL with the served model's Hugging Face id (the plan names none)";
        }
        if (plan.band_low <= 0) {
            smoke.basis += "; the plan carries no band, so only the prediction is shown";
        }
        return smoke;
    }
    smoke.figure = "TFLOP/s per GPU";
    const std::optional<Precision> precision = parse_precision(plan.precision);
    const std::string dtype = torch_dtype(plan.precision);
    if (!precision || dtype.empty() || !gpu.supports(*precision)) {
        smoke.basis = fmt::format("the plan trains at {}: gpusel's GEMM probe runs bf16 and fp16 only", plan.precision);
        return smoke;
    }
    // A training step averages `mfu` of the dense peak over all its work (GEMMs, attention,
    // element-wise kernels, communication not hidden); its GEMMs run at least that fast. A large
    // square GEMM that cannot reach it means the plan's step time cannot hold on this GPU.
    const double peak_tflops = gpu.peak_flops_per_s(*precision) / 1e12;
    smoke.kind = "gemm-probe";
    smoke.command = fmt::format(
        "for i in $(seq 0 {}); do CUDA_VISIBLE_DEVICES=$i python3 -c \"import torch,time; n=8192; "
        "a=torch.randn(n,n,device='cuda',dtype=torch.{}); b=torch.randn_like(a); [a@b for _ in range(20)]; "
        "torch.cuda.synchronize(); t=time.perf_counter(); [a@b for _ in range(200)]; torch.cuda.synchronize(); "
        "print('GPU $i', round(2*n**3*200/(time.perf_counter()-t)/1e12,1), 'TFLOP/s')\"; done",
        plan.gpus_per_node - 1, dtype);
    smoke.low = plan.mfu * peak_tflops;
    smoke.predicted = smoke.low;
    smoke.high = peak_tflops;
    smoke.basis = fmt::format(
        "a step of the plan averages MFU {:.1f} % of {}'s dense {} peak {:.0f} TFLOP/s, so its GEMMs need at least "
        "{:.0f} TFLOP/s on every GPU; the peak is the upper end. gpusel does not read the probe's output: compare "
        "by hand",
        plan.mfu * 100, gpu.id, plan.precision, peak_tflops, smoke.low);
    return smoke;
}

Acceptance accept_node(const PlanAssumption& plan, const GpuSpec& gpu, const SmiReport& report,
                       const std::vector<NvlinkGpu>& nvlink, const Topology* topology) {
    Acceptance acceptance;
    acceptance.plan = plan;
    acceptance.checks.push_back(check_gpu_count(plan, report));
    acceptance.checks.push_back(check_plan_nvlink(plan, gpu, nvlink, topology));
    acceptance.checks.push_back(check_numa(plan, gpu, topology));
    acceptance.smoke = smoke_test(plan, gpu);
    return acceptance;
}

CheckResult judge_smoke_result(const SmokeTest& smoke, double measured, const std::string& file) {
    CheckResult result{
        "smoke-test",
        CheckStatus::pass,
        smoke.high > 0 ? fmt::format("{:.0f}-{:.0f}", smoke.low, smoke.high) : fmt::format(">= {:.0f}", smoke.low),
        fmt::format("{:.1f}", measured),
        "",
        0};
    if (smoke.low > 0 && measured < smoke.low) {
        result.status = CheckStatus::fail;
        result.message = fmt::format(
            "{}: {:.1f} {} is below the plan's band ({:.0f}-{:.0f}, predicted {:.0f}): {:.0f} % of the prediction. "
            "The node does not deliver the speed the decision rests on: check clocks, power limit and the engine "
            "settings against the plan's launch, then re-plan with the result as a calibration point "
            "(calibration.speed, vllm_benchmark: FILE)",
            file, measured, smoke.figure, smoke.low, smoke.high, smoke.predicted, 100 * measured / smoke.predicted);
    } else if (smoke.high > 0 && measured > smoke.high) {
        result.status = CheckStatus::note;
        result.message = fmt::format(
            "{}: {:.1f} {} is above the plan's band ({:.0f}-{:.0f}, predicted {:.0f}): accepted; the plan was "
            "pessimistic, so a smaller or cheaper pick may do: re-plan with the result as a calibration point "
            "(calibration.speed, vllm_benchmark: FILE)",
            file, measured, smoke.figure, smoke.low, smoke.high, smoke.predicted);
    } else {
        result.message = fmt::format("{}: {:.1f} {}, within the plan's band (predicted {:.0f})", file, measured,
                                     smoke.figure, smoke.predicted);
    }
    return result;
}

}  // namespace gpusel
