// Reading a launch back and comparing it with the plan (deploy.hpp, read_launch_settings and
// compare_launch): a vllm serve / SGLang / trtllm-serve / torchrun command in shell text, or a
// Kubernetes manifest whose containers run one.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "deploy/deploy.hpp"
#include "deploy/launch_text.hpp"
#include "io/yaml.hpp"

namespace gpusel {

namespace {

struct Word {
    std::string text;
    int line = 0;
    int column = 0;
};
using Words = std::vector<Word>;

// Splits shell text into commands (one per logical line: backslash-newline continues it; `;`,
// `&&` and `|` do not matter here) and words, honouring single and double quotes and `#` comments.
std::vector<Words> shell_commands(std::string_view text) {
    std::vector<Words> commands(1);
    Word word;
    bool in_word = false;
    int line = 1;
    std::size_t line_start = 0;
    const auto start_word = [&](std::size_t at) {
        if (!in_word) {
            word.line = line;
            word.column = static_cast<int>(at - line_start) + 1;
            in_word = true;
        }
    };
    const auto finish_word = [&] {
        if (in_word) {
            commands.back().push_back(word);
        }
        word = Word{};
        in_word = false;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && i + 1 < text.size()) {
            if (text[i + 1] == '\n') {
                ++line;
                line_start = i + 2;
            } else {
                start_word(i);
                word.text += text[i + 1];
            }
            ++i;
        } else if (c == '\'' || c == '"') {
            start_word(i);
            for (++i; i < text.size() && text[i] != c; ++i) {
                if (c == '"' && text[i] == '\\' && i + 1 < text.size()) {
                    ++i;
                }
                word.text += text[i];
            }
        } else if (c == '#' && !in_word) {
            while (i + 1 < text.size() && text[i + 1] != '\n') {
                ++i;
            }
        } else if (c == '\n') {
            finish_word();
            commands.emplace_back();
            ++line;
            line_start = i + 1;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            finish_word();
        } else {
            start_word(i);
            word.text += c;
        }
    }
    finish_word();
    return commands;
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Where the engine's options start in `words`, and which engine; npos when none runs here.
std::pair<std::size_t, std::string> find_program(const Words& words) {
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& w = words[i].text;
        if ((w == "vllm" || ends_with(w, "/vllm")) && i + 2 < words.size() && words[i + 1].text == "serve") {
            return {i + 3, "vllm command line"};  // vllm serve MODEL
        }
        if (ends_with(w, "sglang.launch_server")) {
            return {i + 1, "sglang command line"};
        }
        if ((w == "trtllm-serve" || ends_with(w, "/trtllm-serve")) && i + 1 < words.size()) {
            return {i + 2, "trtllm-serve command line"};
        }
        if (w == "torchrun" || ends_with(w, "/torchrun")) {
            return {i + 1, "torchrun command line"};
        }
        if (w == "deepspeed" || ends_with(w, "/deepspeed")) {
            return {i + 1, "deepspeed command line"};
        }
    }
    return {std::string::npos, ""};
}

Diagnostic problem(const std::string& file, Position position, std::string message) {
    return Diagnostic{file, position, "", std::move(message)};
}

int integer_value(const Word& flag, const std::string& value, const std::string& file) {
    const ParsedNumber parsed = parse_integer(value);
    if (!parsed.value || *parsed.value < 0 || *parsed.value > 1e9) {
        throw InputError(problem(file, Position{flag.line, flag.column},
                                 fmt::format("{}: '{}' is not a count", flag.text, printable_text(value))));
    }
    return static_cast<int>(*parsed.value);
}

double fraction_value(const Word& flag, const std::string& value, const std::string& file) {
    const ParsedNumber parsed = parse_quantity(value, UnitKind::plain);
    if (!parsed.value || *parsed.value <= 0 || *parsed.value > 1) {
        throw InputError(
            problem(file, Position{flag.line, flag.column},
                    fmt::format("{}: '{}' is not a fraction in (0, 1]", flag.text, printable_text(value))));
    }
    return *parsed.value;
}

// Reads the options after `start` ("--flag value" or "--flag=value"; underscores read as dashes,
// as vLLM's and SGLang's parsers accept both) into `settings`.
void read_options(const Words& words, std::size_t start, LaunchSettings& settings, const std::string& file) {
    for (std::size_t i = start; i < words.size(); ++i) {
        std::string flag = words[i].text;
        if (flag.size() < 2 || flag[0] != '-') {
            continue;
        }
        std::string value;
        if (const std::size_t equals = flag.find('='); equals != std::string::npos) {
            value = flag.substr(equals + 1);
            flag.resize(equals);
        } else if (i + 1 < words.size() && words[i + 1].text.rfind("--", 0) != 0) {
            value = words[i + 1].text;
        }
        std::replace(flag.begin(), flag.end(), '_', '-');
        const Word at{flag, words[i].line, words[i].column};
        if (flag == "--tensor-parallel-size" || flag == "-tp" || flag == "--tp-size" || flag == "--tp" ||
            flag == "--tensor-model-parallel-size") {
            settings.tensor_parallel = integer_value(at, value, file);
        } else if (flag == "--pipeline-parallel-size" || flag == "-pp" || flag == "--pp-size" ||
                   flag == "--pipeline-model-parallel-size") {
            settings.pipeline_parallel = integer_value(at, value, file);
        } else if (flag == "--gpu-memory-utilization" || flag == "--mem-fraction-static" ||
                   flag == "--kv-cache-free-gpu-memory-fraction") {
            settings.memory_fraction = fraction_value(at, value, file);
        } else if (flag == "--max-model-len" || flag == "--context-length" || flag == "--max-seq-len") {
            settings.max_model_len = integer_value(at, value, file);
        } else if (flag == "--max-num-seqs" || flag == "--max-running-requests" || flag == "--max-batch-size") {
            settings.max_num_seqs = integer_value(at, value, file);
        } else if (flag == "--ep-size" || flag == "--ep" || flag == "--expert-parallel-size") {
            settings.expert_parallel = integer_value(at, value, file);
        } else if (flag == "--scheduler-recv-interval") {
            settings.scheduler_recv_interval = integer_value(at, value, file);
        } else if (flag == "--enable-expert-parallel" || flag == "-ep") {
            settings.enable_expert_parallel = true;
        } else if (flag == "--kv-cache-dtype") {
            settings.kv_cache_dtype = value;
        } else if (flag == "--quantization" || flag == "-q") {
            settings.quantization = value;
        } else if (flag == "--nproc-per-node" || flag == "--num-gpus") {
            settings.gpus_per_pod = integer_value(at, value, file);
        } else if ((flag == "--nnodes" || flag == "--num-nodes") && value.rfind('$', 0) != 0) {
            settings.pods = integer_value(at, value, file);
        } else if (flag == "--micro-batch-size" || flag == "--per-device-train-batch-size") {
            settings.micro_batch = integer_value(at, value, file);
        } else if (flag == "--gradient-accumulation-steps") {
            settings.gradient_accumulation = integer_value(at, value, file);
        } else if (flag == "--global-batch-size") {
            settings.global_batch = integer_value(at, value, file);
        } else if (flag == "--context-parallel-size") {
            settings.context_parallel = integer_value(at, value, file);
        } else if (flag == "--num-virtual-stages-per-pipeline-rank") {
            settings.virtual_stages = integer_value(at, value, file);
        } else if (flag == "--num-layers-per-virtual-pipeline-stage") {
            settings.layers_per_virtual_stage = integer_value(at, value, file);
        } else if (flag == "--num-layers") {
            settings.layers = integer_value(at, value, file);
        }
        settings.megatron = settings.megatron || flag == "--tensor-model-parallel-size" ||
                            flag == "--pipeline-model-parallel-size" || flag == "--context-parallel-size" ||
                            flag == "--num-virtual-stages-per-pipeline-rank" ||
                            flag == "--num-layers-per-virtual-pipeline-stage";
    }
}

bool read_command_words(const Words& words, LaunchSettings& settings, const std::string& file) {
    const auto [start, kind] = find_program(words);
    if (start == std::string::npos) {
        return false;
    }
    settings.kind = kind;
    read_options(words, start, settings, file);
    return true;
}

// The value of `name` in `words` ("--name value" or "--name=value"); empty when absent.
std::string option_value(const Words& words, std::string_view name) {
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& word = words[i].text;
        if (word == name && i + 1 < words.size()) {
            return words[i + 1].text;
        }
        if (word.size() > name.size() && word.compare(0, name.size(), name) == 0 && word[name.size()] == '=') {
            return word.substr(name.size() + 1);
        }
    }
    return {};
}

// A prefill/decode launch as `gpusel deploy --target sglang` writes it (deploy/serving.cpp,
// render_disaggregated): SGLang launch_server or Dynamo dynamo.sglang workers with
// --disaggregation-mode, and SGLang's router with --pd-disaggregation listing them. False when
// no worker command is in `commands`.
bool read_pd_launch(const std::vector<Words>& commands, LaunchSettings& settings, const std::string& file) {
    bool dynamo = false;
    for (const Words& words : commands) {
        std::size_t start = std::string::npos;
        bool router = false;
        for (std::size_t i = 0; i < words.size() && start == std::string::npos && !router; ++i) {
            if (ends_with(words[i].text, "sglang.launch_server") || ends_with(words[i].text, "dynamo.sglang")) {
                start = i + 1;
                dynamo = dynamo || ends_with(words[i].text, "dynamo.sglang");
            }
            router = ends_with(words[i].text, "sglang_router.launch_router");
        }
        if (router && std::any_of(words.begin(), words.end(),
                                  [](const Word& word) { return word.text == "--pd-disaggregation"; })) {
            const auto listed = [&](std::string_view flag) {
                return static_cast<int>(std::count_if(words.begin(), words.end(), [&](const Word& word) {
                    return word.text == flag || word.text.rfind(std::string(flag) + "=", 0) == 0;
                }));
            };
            settings.prefill_workers = listed("--prefill");
            settings.decode_workers = listed("--decode");
            continue;
        }
        const std::string mode =
            start == std::string::npos ? std::string() : option_value(words, "--disaggregation-mode");
        if (mode != "prefill" && mode != "decode") {
            continue;
        }
        std::optional<LaunchSettings::Worker>& slot =
            mode == "prefill" ? settings.prefill_worker : settings.decode_worker;
        if (slot) {
            continue;  // the first command of each phase (a script runs one per worker)
        }
        LaunchSettings read;
        read_options(words, start, read, file);
        slot = LaunchSettings::Worker{words.front().line, read.tensor_parallel, read.expert_parallel, read.max_num_seqs,
                                      read.max_model_len, read.kv_cache_dtype,  read.quantization};
    }
    if (!settings.disaggregated()) {
        return false;
    }
    settings.kind = dynamo ? "dynamo PD launch" : "sglang PD launch";
    return true;
}

const YamlNode* child(const YamlNode* node, std::initializer_list<std::string_view> path) {
    for (const std::string_view key : path) {
        if (node == nullptr || node->kind != YamlNode::Kind::mapping) {
            return nullptr;
        }
        node = node->find(key);
    }
    return node;
}

// The container's GPU limit, by the resource names of the NVIDIA, AMD and Habana device plugins.
const YamlNode* gpu_limit(const YamlNode& container) {
    for (const std::string_view resource : {"nvidia.com/gpu", "amd.com/gpu", "habana.ai/gaudi"}) {
        if (const YamlNode* limit = child(&container, {"resources", "limits", resource}); limit != nullptr) {
            return limit;
        }
    }
    return nullptr;
}

void read_container(const YamlNode& container, LaunchSettings& settings, const std::string& file) {
    Words words;
    for (const char* key : {"command", "args"}) {
        if (const YamlNode* list = container.find(key); list != nullptr && list->kind == YamlNode::Kind::sequence) {
            for (const YamlNode& item : list->items) {
                words.push_back({item.scalar, item.position.line, item.position.column});
            }
        }
    }
    const std::string kind = settings.kind;
    const std::optional<int> pods = settings.pods;
    if (read_command_words(words, settings, file)) {
        settings.kind = "kubernetes manifest (" + settings.kind + ")";
    } else {
        settings.kind = kind;
    }
    settings.pods = pods;  // torchrun's --nnodes is not a pod count; the workload's parallelism is
    if (const YamlNode* gpus = gpu_limit(container); gpus != nullptr) {
        settings.gpus_per_pod =
            integer_value(Word{"resources.limits", gpus->position.line, gpus->position.column}, gpus->scalar, file);
    }
}

void read_workload_document(const YamlNode& document, LaunchSettings& settings, const std::string& file) {
    const YamlNode* kind = child(&document, {"kind"});
    if (kind == nullptr) {
        return;
    }
    const YamlNode* pod = nullptr;
    if (kind->scalar == "Deployment" || kind->scalar == "StatefulSet") {
        const YamlNode* replicas = child(&document, {"spec", "replicas"});
        settings.pods = replicas == nullptr
                            ? 1
                            : integer_value(Word{"spec.replicas", replicas->position.line, replicas->position.column},
                                            replicas->scalar, file);
        pod = child(&document, {"spec", "template", "spec"});
    } else if (kind->scalar == "Job") {
        const YamlNode* parallelism = child(&document, {"spec", "parallelism"});
        settings.pods =
            parallelism == nullptr
                ? 1
                : integer_value(Word{"spec.parallelism", parallelism->position.line, parallelism->position.column},
                                parallelism->scalar, file);
        pod = child(&document, {"spec", "template", "spec"});
    } else if (kind->scalar == "Pod") {
        settings.pods = 1;
        pod = child(&document, {"spec"});
    }
    if (pod == nullptr) {
        return;
    }
    if (const YamlNode* product = child(pod, {"nodeSelector", "nvidia.com/gpu.product"}); product != nullptr) {
        settings.node_product = product->scalar;
    }
    if (const YamlNode* containers = child(pod, {"containers"}); containers != nullptr) {
        for (const YamlNode& container : containers->items) {
            if (gpu_limit(container) != nullptr) {
                read_container(container, settings, file);
            }
        }
    }
}

LaunchSettings read_manifest(std::string_view text, const std::string& file) {
    LaunchSettings settings;
    settings.kind = "kubernetes manifest";
    // One document at a time: the tree of the last one is freed before the next is parsed.
    for (const YamlDocumentText& document : split_yaml_documents(text)) {
        read_workload_document(parse_yaml_document(document, file), settings, file);
    }
    if (!settings.gpus_per_pod) {
        throw InputError(problem(file, Position{},
                                 "no container with a GPU limit (resources.limits nvidia.com/gpu, amd.com/gpu or "
                                 "habana.ai/gaudi) in the manifest"));
    }
    return settings;
}

}  // namespace

LaunchSettings read_launch_settings(std::string_view text, const std::string& file_name) {
    const bool manifest = text.rfind("apiVersion:", 0) == 0 || text.find("\napiVersion:") != std::string_view::npos;
    if (manifest) {
        return read_manifest(text, file_name);
    }
    LaunchSettings settings;
    const std::vector<Words> commands = shell_commands(text);
    if (read_pd_launch(commands, settings, file_name)) {
        return settings;
    }
    for (const Words& command : commands) {
        if (read_command_words(command, settings, file_name)) {
            return settings;
        }
    }
    throw InputError(problem(file_name, Position{},
                             "no vllm serve, sglang.launch_server, trtllm-serve, torchrun or deepspeed command and no "
                             "Kubernetes manifest (apiVersion:) found"));
}

namespace {

Engine engine_of_kind(const std::string& kind) {
    if (kind.find("sglang") != std::string::npos) {
        return Engine::sglang;
    }
    if (kind.find("trtllm") != std::string::npos) {
        return Engine::tensorrt_llm;
    }
    return kind.find("vllm") != std::string::npos ? Engine::vllm : Engine::automatic;
}

bool kv_dtype_matches(KvCacheFormat planned, const std::string& written) {
    const std::string dtype = to_lower(written);
    if (planned == KvCacheFormat::fp8) {
        return dtype.rfind("fp8", 0) == 0;
    }
    // auto: the model's dtype, 16-bit for the 16-bit formats the plan can name.
    return dtype == "auto" || dtype == "fp16" || dtype == "float16" || dtype == "half" || dtype == "bfloat16" ||
           dtype == "bf16";
}

// The --quantization names of vLLM and SGLang that load a checkpoint already in the planned FP4
// format (the checkpoint's config selects them when the flag is absent).
bool names_checkpoint_method(WeightFormat planned, const std::string& written) {
    const std::string method = to_lower(written);
    if (planned == WeightFormat::nvfp4) {
        return method == "modelopt_fp4" || method == "compressed-tensors";
    }
    if (planned == WeightFormat::mxfp4) {
        return method == "mxfp4" || method == "compressed-tensors" || method == "quark";
    }
    return false;
}

// Compared with the settings of the engine the launch runs (a plan for vLLM launched on SGLang is
// held to SGLang's arithmetic for the same layout, as `deploy --target sglang` writes it).
void compare_serving(const LaunchSpec& plan_spec, const LaunchSettings& settings, std::vector<std::string>& findings) {
    const Engine engine = engine_of_kind(settings.kind);
    if (engine == Engine::automatic) {
        return;
    }
    const LaunchSpec spec = with_engine_settings(plan_spec, engine);
    if (!settings.tensor_parallel && spec.layout.tensor_parallel != 1) {
        findings.push_back(fmt::format("no tensor-parallel size: the engine's default 1; the plan assumed {}",
                                       spec.layout.tensor_parallel));
    }
    if (!settings.memory_fraction && spec.paged_engine && (engine == Engine::sglang || spec.memory_fraction != 0.9)) {
        findings.push_back(fmt::format("no memory fraction: the engine's default applies; the estimate assumed {:g}",
                                       spec.memory_fraction));
    }
    if (settings.memory_fraction && spec.paged_engine &&
        std::abs(*settings.memory_fraction - spec.memory_fraction) > 5e-4) {
        findings.push_back(fmt::format("memory fraction {:g}; the estimate assumed {:g}: {}", *settings.memory_fraction,
                                       spec.memory_fraction,
                                       *settings.memory_fraction < spec.memory_fraction
                                           ? "a smaller KV-cache pool holds fewer sequences than estimated"
                                           : "less memory stays free than the plan's headroom"));
    }
    if (settings.max_model_len && *settings.max_model_len != spec.max_model_len) {
        findings.push_back(
            fmt::format("max model length {}; the estimate assumed {}", *settings.max_model_len, spec.max_model_len));
    }
    // vLLM's --enable-expert-parallel spans the command's tensor-parallel GPUs.
    const bool expert_flag = settings.expert_parallel || settings.enable_expert_parallel;
    const int expert_parallel =
        settings.expert_parallel.value_or(settings.enable_expert_parallel ? settings.tensor_parallel.value_or(1) : 1);
    if ((expert_flag || spec.expert_parallel > 1) && expert_parallel != spec.expert_parallel) {
        findings.push_back(fmt::format(
            "expert-parallel size {}{}; the speed estimate ran {}: the MoE layers' all-to-all and expert balance "
            "were estimated for it",
            expert_parallel, expert_flag ? "" : " (the engine's default)", spec.expert_parallel));
    }
    // SGLang polls for new requests once per this many decode steps: a request waits up to that
    // many steps more for its first token (perf/inference.cpp, receive_wait).
    if (engine == Engine::sglang && settings.scheduler_recv_interval.value_or(1) != spec.scheduler_recv_interval) {
        findings.push_back(
            fmt::format("scheduler receive interval {}{}; the speed estimate assumed {}: the TTFT "
                        "was estimated for it",
                        settings.scheduler_recv_interval.value_or(1),
                        settings.scheduler_recv_interval ? "" : " (SGLang's default)", spec.scheduler_recv_interval));
    }
    if (settings.max_num_seqs && *settings.max_num_seqs != spec.max_num_seqs) {
        findings.push_back(fmt::format("max concurrent sequences {}; the estimate assumed {}", *settings.max_num_seqs,
                                       spec.max_num_seqs));
    }
    if (settings.kv_cache_dtype && !kv_dtype_matches(spec.kv_cache, *settings.kv_cache_dtype)) {
        findings.push_back(fmt::format("KV-cache dtype {}; the plan assumed {}",
                                       printable_text(*settings.kv_cache_dtype), to_string(spec.kv_cache)));
    }
    const std::string expected = deploy_detail::quantization_flag_value(spec.weights, spec.precision, engine);
    if (settings.quantization && (expected.empty() || settings.quantization->rfind(expected, 0) != 0) &&
        !names_checkpoint_method(spec.weights, *settings.quantization)) {
        findings.push_back(fmt::format("quantization {}; the plan assumed weights {} at {} compute",
                                       printable_text(*settings.quantization), to_string(spec.weights),
                                       to_string(spec.precision)));
    }
}

// The batch settings the memory estimate (micro-batch) and the step time (global batch) assumed.
void compare_batches(const LaunchSpec& spec, const LaunchSettings& settings, std::vector<std::string>& findings) {
    if (settings.micro_batch && *settings.micro_batch != spec.micro_batch) {
        findings.push_back(
            fmt::format("micro-batch {}; the memory estimate assumed {}", *settings.micro_batch, spec.micro_batch));
    }
    // A data-parallel-only launch of a split layout runs every GPU as a data-parallel rank: its
    // accumulation is the one that multiplies out over all of them (deploy writes that one).
    const int accumulation =
        settings.megatron ? spec.gradient_accumulation : deploy_detail::data_parallel_batch(spec).gradient_accumulation;
    if (settings.gradient_accumulation && *settings.gradient_accumulation != accumulation) {
        findings.push_back(fmt::format("gradient accumulation {}; the plan assumed {}", *settings.gradient_accumulation,
                                       accumulation));
    }
    if (settings.global_batch && *settings.global_batch != spec.global_batch) {
        findings.push_back(
            fmt::format("global batch {}; the plan assumed {}", *settings.global_batch, spec.global_batch));
    }
}

// Megatron-LM's context-parallel size and model chunks per stage, absent ones at its default 1:
// the activation memory and the pipeline bubble the plan estimated depend on both.
void compare_megatron(const LaunchSpec& spec, const LaunchSettings& settings, std::vector<std::string>& findings) {
    if (!settings.megatron) {
        return;
    }
    const int context_parallel = settings.context_parallel.value_or(1);
    if (context_parallel != spec.context_parallel) {
        findings.push_back(
            fmt::format("context-parallel size {}{}; the plan assumed {}: the activations per GPU were "
                        "estimated for each sequence split over {} GPUs",
                        context_parallel, settings.context_parallel ? "" : " (Megatron-LM's default)",
                        spec.context_parallel, spec.context_parallel));
    }
    int chunks = settings.virtual_stages.value_or(1);
    if (!settings.virtual_stages && settings.layers_per_virtual_stage && *settings.layers_per_virtual_stage > 0) {
        const int layers = settings.layers.value_or(spec.architecture.layers);
        const int stages = std::max(1, settings.pipeline_parallel.value_or(spec.layout.pipeline_parallel));
        chunks = std::max(1, layers / (stages * *settings.layers_per_virtual_stage));
    }
    if (chunks != spec.virtual_stages) {
        findings.push_back(
            fmt::format("{} model chunk{} per pipeline stage; the step time assumed {} (the interleaved "
                        "schedule's bubble is (stages − 1) / chunks micro-batches)",
                        chunks, chunks == 1 ? "" : "s", spec.virtual_stages));
    }
}

// A PD launch against the plan's split: each phase's worker (tensor and expert parallel, the
// decode batch, the engine settings of SGLang as render_disaggregated writes them) and the
// workers and GPUs the router lists.
void compare_disaggregated(const LaunchSpec& plan_spec, const LaunchSettings& settings,
                           std::vector<std::string>& findings) {
    if (!plan_spec.disaggregated) {
        findings.push_back(fmt::format(
            "a prefill/decode launch (--disaggregation-mode); the plan serves this role co-located on {}x {} ({}): "
            "deployment.disaggregated chose no split",
            plan_spec.gpus, plan_spec.gpu, describe(plan_spec.layout)));
        return;
    }
    const LaunchSpec spec = with_engine_settings(plan_spec, Engine::sglang);
    const DisaggregatedPlan& split = *spec.disaggregated;
    const auto check_phase = [&](std::string_view name, const std::optional<LaunchSettings::Worker>& worker,
                                 const DisaggregatedPhase& phase) {
        if (!worker) {
            findings.push_back(fmt::format("no {} worker (--disaggregation-mode {}); the plan has {} per group", name,
                                           name, phase.workers));
            return;
        }
        const int tensor_parallel = worker->tensor_parallel.value_or(1);
        if (tensor_parallel != phase.tensor_parallel) {
            findings.push_back(fmt::format("{} worker: tensor-parallel size {}{}; the plan sized {} workers of {} GPUs",
                                           name, tensor_parallel, worker->tensor_parallel ? "" : " (SGLang's default)",
                                           name, phase.tensor_parallel));
        }
        const int expert_parallel = worker->expert_parallel.value_or(1);
        if (expert_parallel != phase.expert_parallel) {
            findings.push_back(fmt::format("{} worker: expert-parallel size {}{}; the plan's {} estimate ran {}", name,
                                           expert_parallel, worker->expert_parallel ? "" : " (SGLang's default)", name,
                                           phase.expert_parallel));
        }
        if (name == "decode" && worker->max_num_seqs != phase.batch) {
            findings.push_back(
                worker->max_num_seqs
                    ? fmt::format("decode worker: max running requests {}; the plan sized a decode batch of {} for "
                                  "the TPOT target",
                                  *worker->max_num_seqs, phase.batch)
                    : fmt::format("decode worker: no --max-running-requests: SGLang admits what its memory holds; the "
                                  "plan sized a decode batch of {} for the TPOT target",
                                  phase.batch));
        }
        if (worker->max_model_len && *worker->max_model_len != spec.max_model_len) {
            findings.push_back(fmt::format("{} worker: context length {}; the plan assumed {}", name,
                                           *worker->max_model_len, spec.max_model_len));
        }
        if (worker->kv_cache_dtype && !kv_dtype_matches(spec.kv_cache, *worker->kv_cache_dtype)) {
            findings.push_back(fmt::format("{} worker: KV-cache dtype {}; the plan assumed {}", name,
                                           printable_text(*worker->kv_cache_dtype), to_string(spec.kv_cache)));
        }
        const std::string expected =
            deploy_detail::quantization_flag_value(spec.weights, spec.precision, Engine::sglang);
        if (worker->quantization && (expected.empty() || worker->quantization->rfind(expected, 0) != 0) &&
            !names_checkpoint_method(spec.weights, *worker->quantization)) {
            findings.push_back(fmt::format("{} worker: quantization {}; the plan assumed weights {} at {} compute",
                                           name, printable_text(*worker->quantization), to_string(spec.weights),
                                           to_string(spec.precision)));
        }
    };
    check_phase("prefill", settings.prefill_worker, split.prefill);
    check_phase("decode", settings.decode_worker, split.decode);
    // The router lists the serving workers of every group; spares stand by outside it.
    const auto check_listed = [&](std::string_view name, const std::optional<int>& listed,
                                  const DisaggregatedPhase& phase) {
        if (listed && *listed != phase.workers * split.replicas) {
            findings.push_back(fmt::format("the router lists {} {} worker{}; the plan has {} per group × {} group{}",
                                           *listed, name, *listed == 1 ? "" : "s", phase.workers, split.replicas,
                                           split.replicas == 1 ? "" : "s"));
        }
    };
    check_listed("prefill", settings.prefill_workers, split.prefill);
    check_listed("decode", settings.decode_workers, split.decode);
    if (settings.prefill_workers && settings.decode_workers && settings.prefill_worker && settings.decode_worker) {
        const int launched = *settings.prefill_workers * settings.prefill_worker->tensor_parallel.value_or(1) +
                             *settings.decode_workers * settings.decode_worker->tensor_parallel.value_or(1);
        const int spare_gpus = split.prefill.spare_workers * split.prefill.tensor_parallel +
                               split.decode.spare_workers * split.decode.tensor_parallel;
        const int serving = split.prefill.gpus + split.decode.gpus - spare_gpus;
        if (launched != serving) {
            findings.push_back(fmt::format("{} GPUs serve behind the router; the plan has {} (and {} spare)", launched,
                                           serving, spare_gpus));
        }
    }
}

}  // namespace

std::vector<std::string> compare_launch(const LaunchSpec& spec, const LaunchSettings& settings) {
    std::vector<std::string> findings;
    if (settings.disaggregated()) {
        compare_disaggregated(spec, settings, findings);
        return findings;
    }
    if (settings.tensor_parallel && *settings.tensor_parallel != spec.layout.tensor_parallel) {
        findings.push_back(
            fmt::format("tensor-parallel size {}; the plan assumed {}: the memory per GPU and the speed "
                        "were estimated for {}",
                        *settings.tensor_parallel, spec.layout.tensor_parallel, describe(spec.layout)));
    }
    if (settings.pipeline_parallel && *settings.pipeline_parallel != spec.layout.pipeline_parallel) {
        findings.push_back(fmt::format("pipeline-parallel size {}; the plan assumed {}", *settings.pipeline_parallel,
                                       spec.layout.pipeline_parallel));
    }
    if (!spec.training) {
        compare_serving(spec, settings, findings);
    } else {
        compare_batches(spec, settings, findings);
        compare_megatron(spec, settings, findings);
    }
    const int planned_per_pod = spec.training ? spec.gpus_per_node : spec.gpus_per_replica;
    const int planned_pods = spec.training ? spec.nodes : spec.replicas;
    const std::string_view unit = spec.training ? "node" : "replica";
    if (settings.gpus_per_pod && *settings.gpus_per_pod != planned_per_pod) {
        findings.push_back(
            fmt::format("{} GPUs per {}; the plan assumed {}", *settings.gpus_per_pod, unit, planned_per_pod));
    }
    if (settings.pods && *settings.pods != planned_pods) {
        findings.push_back(
            fmt::format("{} {}s; the plan assumed {}{}", *settings.pods, unit, planned_pods,
                        spec.training ? std::string() : fmt::format(" ({} spare)", spec.spare_replicas)));
    }
    if (settings.gpus_per_pod && settings.pods && *settings.gpus_per_pod * *settings.pods != spec.gpus) {
        findings.push_back(
            fmt::format("{} GPUs in all; the plan has {}", *settings.gpus_per_pod * *settings.pods, spec.gpus));
    }
    if (settings.node_product && *settings.node_product != spec.node_product) {
        findings.push_back(fmt::format("node selector nvidia.com/gpu.product {}; the plan picked {} ({})",
                                       printable_text(*settings.node_product), spec.gpu, spec.node_product));
    }
    return findings;
}

}  // namespace gpusel
