// Workload and project files: the top level of a workload (name, kind, role, model, precision,
// runtime, budget, objective, each section handed to its reader), projects of several workloads,
// the loaders and what kind of document a file is. The sections are read in workload_training.cpp,
// workload_serving.cpp, workload_deployment.cpp and workload_calibration.cpp, proposals in
// workload_proposal.cpp; the reader they share is inputs/workload_reader.hpp.

#include "inputs/workload.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "inputs/hf_hub.hpp"
#include "inputs/workload_reader.hpp"
#include "io/yaml.hpp"

namespace gpusel {

void read_model_fields(MapReader& reader, ModelSpec& model);
void complete_model(ModelSpec& model, MapReader& reader);

using namespace inputs_detail;

namespace {

constexpr std::pair<WorkloadKind, std::string_view> kind_names[] = {{WorkloadKind::training, "training"},
                                                                    {WorkloadKind::fine_tuning, "fine-tuning"},
                                                                    {WorkloadKind::inference, "inference"}};
constexpr std::pair<Framework, std::string_view> framework_names[] = {{Framework::pytorch, "pytorch"},
                                                                      {Framework::pytorch_1, "pytorch-1"},
                                                                      {Framework::megatron, "megatron"},
                                                                      {Framework::llm_c, "llm.c"},
                                                                      {Framework::llama_cpp, "llama.cpp"}};
constexpr std::pair<Allocator, std::string_view> allocator_names[] = {{Allocator::caching, "caching"},
                                                                      {Allocator::static_buffers, "static"}};
constexpr std::pair<Objective, std::string_view> objective_names[] = {
    {Objective::tco, "tco"},
    {Objective::time, "time"},
    {Objective::latency, "latency"},
    {Objective::throughput_per_usd, "throughput-per-usd"},
    {Objective::energy, "energy"}};

Workload read_workload_node(const YamlNode& root, Diagnostics& diagnostics, const LoadContext& context,
                            const std::filesystem::path& base, const std::string& prefix, const std::string& file) {
    Workload workload;
    workload.file = file;
    WorkloadReader reader(workload, diagnostics, context, base, prefix);
    reader.read(root);
    return workload;
}

}  // namespace

namespace inputs_detail {

YamlNode empty_mapping(Position position) {
    YamlNode node;
    node.kind = YamlNode::Kind::mapping;
    node.position = position;
    return node;
}

void WorkloadReader::read(const YamlNode& root) {
    MapReader top(root, m_prefix, m_diagnostics);
    top.require("name");
    top.require("kind");
    top.require("model");
    top.format_version();
    if (top.text("name", m_workload.name) && m_workload.name.empty()) {
        top.error("name", "name must not be empty");
    }
    const bool kind_ok = top.choice("kind", m_workload.kind, kind_names);
    m_workload.role = m_workload.kind == WorkloadKind::inference ? Role::inference : Role::training;
    if (!top.choice("role", m_workload.role, role_names) && !top.has("role")) {
        assume("role", name_of(role_names, m_workload.role), "from kind");
    }
    if (const YamlNode* model = top.node("model")) {
        read_model(*model, top.child_path("model"));
    }
    read_precision(top);
    read_runtime(top.node("runtime"), top.child_path("runtime"), top.position());
    const bool training = m_workload.kind != WorkloadKind::inference;
    if (kind_ok && training && m_workload.runtime.framework == Framework::llama_cpp) {
        top.error("runtime",
                  "runtime.framework llama.cpp is an inference runtime; a training workload needs "
                  "pytorch, pytorch-1, megatron or llm.c");
    }
    if (const YamlNode* node = top.node("training")) {
        if (kind_ok && !training) {
            top.error("training", "a training section in an inference workload; remove it or set kind: fine-tuning");
        } else {
            read_training(*node, top.child_path("training"));
        }
    } else if (training && kind_ok) {
        read_training(empty_mapping(top.position()), top.child_path("training"));
    }
    if (const YamlNode* node = top.node("inference")) {
        if (kind_ok && training) {
            top.error("inference", "an inference section in a training workload; remove it or set kind: inference");
        } else {
            read_inference(*node, top.child_path("inference"));
        }
    } else if (!training && kind_ok) {
        read_inference(empty_mapping(top.position()), top.child_path("inference"));
    }
    if (const YamlNode* node = top.node("data")) {
        read_data(*node, top.child_path("data"));
    } else if (m_workload.assumes_image_pipeline()) {
        assume("data", "JPEG images decoded and augmented on the host CPUs, a loader worker per vCPU",
               "image model; vCPUs from each GPU's offers");
    }
    read_deployment(top.node("deployment"), top.child_path("deployment"), top.position());
    derive_peak_load();
    if (const YamlNode* node = top.node("budget")) {
        MapReader budget(*node, top.child_path("budget"), m_diagnostics);
        budget.number("capex", m_workload.budget.capex_usd, UnitKind::usd, 0, 1e12, true);
        budget.number("monthly", m_workload.budget.monthly_usd, UnitKind::usd, 0, 1e12, true);
        budget.finish();
    }
    read_constraints(top.node("constraints"), top.child_path("constraints"), top.position());
    derive_site_from_segments();
    read_objective(top);
    if (const YamlNode* node = top.node("calibration")) {
        read_calibration(*node, top.child_path("calibration"));
    }
    top.finish();
}

// Explicit beats default: a workload that allows only edge parts (constraints.segment: [edge])
// runs at the edge, whatever the role's default site; the assumption says it was derived.
void WorkloadReader::derive_site_from_segments() {
    const std::vector<Segment>& segments = m_workload.constraints.segments;
    DeploymentSpec& deployment = m_workload.deployment;
    if (deployment.site || deployment.target == DeploymentTarget::edge || segments.empty() ||
        std::any_of(segments.begin(), segments.end(), [](Segment segment) { return segment != Segment::edge; })) {
        return;
    }
    deployment.site = Site::edge;
    for (Assumption& assumption : m_workload.assumptions) {
        if (assumption.field == "deployment.site") {
            assumption.value = "edge";
            assumption.source = "derived from constraints.segment: [edge]";
        }
    }
    // The default spare replica is production serving's in a data centre, not an edge device's
    // (docs/workload.md, `redundancy`).
    const auto spare =
        std::find_if(m_workload.assumptions.begin(), m_workload.assumptions.end(),
                     [](const Assumption& assumption) { return assumption.field == "deployment.redundancy"; });
    if (spare != m_workload.assumptions.end()) {
        deployment.redundancy = DeploymentSpec::Redundancy::none;
        m_workload.assumptions.erase(spare);
    }
}

// `objective: tco`, or `objective: {minimize: tco, confidence: 0.9}`.
void WorkloadReader::read_objective(MapReader& top) {
    const YamlNode* node = top.has("objective") ? top.node("objective") : nullptr;
    if (node != nullptr && node->kind == YamlNode::Kind::mapping) {
        MapReader objective(*node, top.child_path("objective"), m_diagnostics);
        if (!objective.choice("minimize", m_workload.objective, objective_names) && !objective.has("minimize")) {
            assume("objective.minimize", "tco", "default");
        }
        if (!objective.number("confidence", m_workload.confidence, UnitKind::fraction, 0.5, 0.99) &&
            !objective.has("confidence")) {
            assume("objective.confidence", "0.9", "default");
        }
        objective.finish();
        return;
    }
    if (!top.choice("objective", m_workload.objective, objective_names) && node == nullptr) {
        assume("objective", "tco", "default");
    }
    if (node == nullptr || node->kind == YamlNode::Kind::scalar) {
        assume("objective.confidence", "0.9", "default");
    }
}

void WorkloadReader::assume(std::string_view field, std::string_view value, std::string_view source) {
    m_workload.assumptions.push_back(Assumption{std::string(field), std::string(value), std::string(source)});
}

void WorkloadReader::read_model(const YamlNode& node, const std::string& path) {
    MapReader reader(node, path, m_diagnostics);
    ModelSpec& model = m_workload.model;
    std::string preset;
    std::string config;
    std::string hf_id;
    std::string revision = "main";
    const bool has_preset = reader.text("preset", preset);
    const bool has_config = reader.text("hf_config", config);
    const bool has_hf = reader.text("hf", hf_id);
    const bool has_revision = reader.text("revision", revision);
    if (int(has_preset) + int(has_config) + int(has_hf) > 1) {
        reader.error(has_hf ? "hf" : "hf_config", "give one of preset, hf_config and hf");
    } else if (has_revision && !has_hf) {
        reader.error("revision", "revision applies to an hf id; add hf: ORG/NAME or remove it");
    } else if (has_hf) {
        try {
            const HfSnapshot snapshot =
                resolve_hf_snapshot(hf_hub_settings_from_environment(m_context.hf_offline), hf_id, revision);
            model = model_from_hf_snapshot(snapshot);
            m_workload.model_label = hf_id;
        } catch (const HfHubError& error) {
            reader.error("hf", error.what());
        } catch (const InputError& error) {
            const Diagnostic& first = error.diagnostics().front();
            reader.error("hf", first.message + " (" + first.file + ")");
        }
    } else if (has_preset && looks_like_hf_repo_id(preset) && m_context.models != nullptr &&
               m_context.models->find(preset) == nullptr) {
        reader.error("preset", fmt::format("'{}' is a Hugging Face id, not a preset; write hf: {}", preset, preset));
    } else if (has_preset) {
        const ModelSpec* found = m_context.models != nullptr ? m_context.models->find(preset) : nullptr;
        if (found == nullptr) {
            const std::string suggestion = m_context.models != nullptr ? m_context.models->suggest(preset) : "";
            reader.error("preset", fmt::format("unknown model preset '{}'{}; `gpusel models list` shows them", preset,
                                               suggestion.empty() ? "" : ", did you mean '" + suggestion + "'?"));
        } else {
            model = *found;
            m_workload.model_label = found->name;
        }
    } else if (has_config) {
        const std::filesystem::path file = std::filesystem::path(config).is_absolute()
                                               ? std::filesystem::path(config)
                                               : (m_base / config).lexically_normal();
        try {
            model = model_from_hf_config_file(file.string());
            m_workload.model_label = config;
        } catch (const InputError& error) {
            reader.error("hf_config", error.diagnostics().front().message + " (" + file.string() + ")");
        }
    }
    read_model_fields(reader, model);
    complete_model(model, reader);
    if (!has_preset && !has_config && !has_hf && !reader.has("params") && model.params == 0 &&
        node.kind == YamlNode::Kind::mapping) {
        reader.error("preset", "the model needs a preset, an hf id, an hf_config, or params and architecture fields");
    }
    if (m_workload.model_label.empty()) {
        m_workload.model_label = model.name.empty() ? "custom model" : model.name;
    }
    if (model.name.empty()) {
        model.name = m_workload.model_label;
    }
    reader.finish();
}

void WorkloadReader::read_precision(MapReader& top) {
    const auto read_format = [&](std::string_view key, auto parse, auto& into, const std::vector<std::string>& names) {
        std::string text;
        if (!top.text(key, text)) {
            return false;
        }
        if (const auto parsed = parse(text)) {
            into = *parsed;
            return true;
        }
        top.error(key, fmt::format("'{}' is not one of {}{}", text, fmt::join(names, ", "), did_you_mean(text, names)));
        return false;
    };
    const std::vector<std::string> precisions = {"fp32", "tf32", "fp16", "bf16", "fp8"};
    const std::vector<std::string> weights = {"fp32", "fp16",   "bf16", "fp8", "int8", "int4",      "nf4",   "nf4-dq",
                                              "q4_0", "q4_k_m", "q8_0", "awq", "gptq", "fp8-block", "nvfp4", "mxfp4"};
    const std::vector<std::string> kv = {"fp16", "bf16", "fp8", "int8"};
    std::string precision_text;
    const YamlNode* precision_node = top.has("precision") ? top.node("precision") : nullptr;
    if (precision_node != nullptr && precision_node->kind == YamlNode::Kind::sequence) {
        read_precision_options(*precision_node, top.child_path("precision"), precisions);
    } else if (precision_node != nullptr) {
        top.text("precision", precision_text);
        const std::optional<Precision> parsed = parse_precision(precision_text);
        if (parsed && (*parsed == Precision::int8 || *parsed == Precision::int4 || *parsed == Precision::fp4)) {
            top.error("precision", fmt::format("'{}' is a weight format, not a compute precision; set weights: {} "
                                               "and precision: fp16 or bf16",
                                               precision_text, precision_text));
        } else if (parsed) {
            m_workload.precision = *parsed;
        } else if (!precision_text.empty()) {
            top.error("precision", fmt::format("'{}' is not one of {}{}", precision_text, fmt::join(precisions, ", "),
                                               did_you_mean(precision_text, precisions)));
        }
    } else {
        top.node("precision");
        assume("precision", "bf16");
    }
    const std::optional<WeightFormat> checkpoint = parse_weight_format(m_workload.model.checkpoint_weights);
    if (!read_format("weights", parse_weight_format, m_workload.weights, weights) && !top.has("weights") &&
        checkpoint) {
        // A quantized checkpoint's own format, read from its quantization config (models.hpp).
        m_workload.weights = *checkpoint;
        assume("weights", to_string(*checkpoint), "model quantization config: " + m_workload.model.quantization);
    } else if (!top.has("weights") && !checkpoint) {
        switch (m_workload.precision) {
            case Precision::fp32:
            case Precision::tf32:
                m_workload.weights = WeightFormat::fp32;
                break;
            case Precision::fp16:
                m_workload.weights = WeightFormat::fp16;
                break;
            case Precision::fp8:
                m_workload.weights =
                    m_workload.kind == WorkloadKind::inference ? WeightFormat::fp8 : WeightFormat::bf16;
                break;
            default:
                m_workload.weights = WeightFormat::bf16;
        }
        assume("weights", to_string(m_workload.weights), "from precision");
    }
    // Only models that keep a KV cache (decoders) are told about its format.
    const ModelFamily family = m_workload.model.family;
    const bool caches = m_workload.model.is_transformer() && family != ModelFamily::encoder;
    if (!read_format("kv_cache", parse_kv_cache_format, m_workload.kv_cache, kv) && !top.has("kv_cache") &&
        m_workload.kind == WorkloadKind::inference && caches) {
        assume("kv_cache", "fp16");
    }
}

// `precision: [bf16, fp8]`: the planner tries each where the GPU runs it natively; the first is
// the workload's precision for single-layout commands.
void WorkloadReader::read_precision_options(const YamlNode& node, const std::string& path,
                                            const std::vector<std::string>& names) {
    if (node.items.empty()) {
        m_diagnostics.error(node.position, path, "an empty list; give one precision or a list of them");
        return;
    }
    for (const YamlNode& item : node.items) {
        const std::optional<Precision> parsed =
            item.kind == YamlNode::Kind::scalar ? parse_precision(item.scalar) : std::nullopt;
        if (!parsed || *parsed == Precision::int8 || *parsed == Precision::int4 || *parsed == Precision::fp4) {
            const std::string text =
                item.kind == YamlNode::Kind::scalar ? item.scalar : std::string(kind_name(item.kind));
            m_diagnostics.error(
                item.position, path,
                fmt::format("'{}' is not one of {}{}", text, fmt::join(names, ", "), did_you_mean(text, names)));
            continue;
        }
        std::vector<Precision>& options = m_workload.precision_options;
        if (std::find(options.begin(), options.end(), *parsed) != options.end()) {
            m_diagnostics.error(item.position, path, fmt::format("'{}' is listed twice", item.scalar));
            continue;
        }
        options.push_back(*parsed);
    }
    if (!m_workload.precision_options.empty()) {
        m_workload.precision = m_workload.precision_options.front();
    }
}

void WorkloadReader::read_runtime(const YamlNode* node, const std::string& path, Position parent) {
    const YamlNode empty = empty_mapping(parent);
    MapReader reader(node != nullptr ? *node : empty, path, m_diagnostics);
    RuntimeSpec& runtime = m_workload.runtime;
    if (!reader.choice("framework", runtime.framework, framework_names) && !reader.has("framework")) {
        assume(reader.child_path("framework"), "pytorch");
    }
    if (const YamlNode* context = reader.node("cuda_context");
        context == nullptr || (context->kind == YamlNode::Kind::scalar && context->scalar == "auto")) {
        runtime.cuda_context_bytes = 0;
    } else {
        reader.number("cuda_context", runtime.cuda_context_bytes, UnitKind::bytes, 0, 1e11, true);
    }
    runtime.allocator = runtime.framework == Framework::llm_c || runtime.framework == Framework::llama_cpp
                            ? Allocator::static_buffers
                            : Allocator::caching;
    if (!reader.choice("allocator", runtime.allocator, allocator_names) && !reader.has("allocator")) {
        assume(reader.child_path("allocator"), to_string(runtime.allocator),
               fmt::format("{} default", to_string(runtime.framework)));
    }
    read_engine(reader);
    reader.finish();
}

std::filesystem::path directory_of(const std::string& path) {
    if (path == "-" || path.empty()) {
        return std::filesystem::current_path();
    }
    return std::filesystem::path(path).parent_path();
}

std::string display_name(const std::string& path) {
    return path == "-" ? "<stdin>" : path;
}

void read_workload_list(MapReader& top, std::string_view key, Project& project, Diagnostics& diagnostics,
                        const LoadContext& context, const std::filesystem::path& base, const std::string& file) {
    const YamlNode* list = top.node(key);
    if (list == nullptr) {
        return;
    }
    if (list->kind != YamlNode::Kind::sequence || list->items.empty()) {
        top.error(key, "expected a non-empty list of workloads ({file: ./train.yaml} or inline workloads)");
        return;
    }
    for (std::size_t i = 0; i < list->items.size(); ++i) {
        const YamlNode& item = list->items[i];
        const std::string path = fmt::format("{}[{}]", key, i);
        const YamlNode* file_node = item.kind == YamlNode::Kind::mapping ? item.find("file") : nullptr;
        if (file_node != nullptr) {
            MapReader entry(item, path, diagnostics);
            std::string relative;
            entry.text("file", relative);
            entry.finish();
            if (relative.empty()) {
                continue;
            }
            const std::filesystem::path target = std::filesystem::path(relative).is_absolute()
                                                     ? std::filesystem::path(relative)
                                                     : (base / relative).lexically_normal();
            try {
                project.workloads.push_back(load_workload_file(target.string(), context));
            } catch (const InputError& error) {
                for (const Diagnostic& inner : error.diagnostics()) {
                    diagnostics.error(entry.position_of("file"), entry.child_path("file"),
                                      "in " + format_diagnostic(inner));
                }
            }
        } else {
            project.workloads.push_back(read_workload_node(item, diagnostics, context, base, path, file));
        }
    }
    for (std::size_t i = 0; i < project.workloads.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (project.workloads[i].name == project.workloads[j].name) {
                top.error(key, fmt::format("two workloads are named '{}'; names must be unique in a project",
                                           project.workloads[i].name));
            }
        }
    }
    // One plan, one currency: the totals add the workloads' money (docs/workload.md).
    for (std::size_t i = 1; i < project.workloads.size(); ++i) {
        const CurrencySpec& first = project.workloads.front().deployment.currency;
        const CurrencySpec& other = project.workloads[i].deployment.currency;
        if (other.code != first.code || other.per_usd != first.per_usd || other.as_of != first.as_of) {
            const auto spelled = [](const CurrencySpec& currency) {
                return currency.is_usd() && currency.as_of.empty()
                           ? std::string("USD (no deployment.currency)")
                           : fmt::format("{} at {:.6g} per USD ({})", currency.code, currency.per_usd, currency.as_of);
            };
            top.error(key, fmt::format("workloads '{}' and '{}' name different currencies, {} and {}; give every "
                                       "workload of a project the same deployment.currency",
                                       project.workloads.front().name, project.workloads[i].name, spelled(first),
                                       spelled(other)));
            break;
        }
    }
}
namespace {

// A month written YYYY-MM as a count of months since year 0; nullopt when malformed.
std::optional<int> month_index(const std::string& text) {
    if (text.size() != 7 || text[4] != '-') {
        return std::nullopt;
    }
    int year = 0;
    int month = 0;
    for (std::size_t i = 0; i < 7; ++i) {
        if (i == 4) {
            continue;
        }
        if (text[i] < '0' || text[i] > '9') {
            return std::nullopt;
        }
        (i < 4 ? year : month) = (i < 4 ? year : month) * 10 + (text[i] - '0');
    }
    if (month < 1 || month > 12) {
        return std::nullopt;
    }
    return year * 12 + month - 1;
}

// `phases:` of a project file: each names a workload and its months; the phase's length becomes
// the workload's horizon (a horizon the workload states must agree with it).
void read_phases(MapReader& top, Project& project, Diagnostics& diagnostics) {
    const YamlNode* list = top.node("phases");
    if (list == nullptr) {
        return;
    }
    if (list->kind != YamlNode::Kind::sequence || list->items.empty()) {
        top.error("phases", "expected a list of phases ({workload: NAME, from: 2027-01, to: 2027-02})");
        return;
    }
    std::vector<std::string> names;
    for (const Workload& workload : project.workloads) {
        names.push_back(workload.name);
    }
    struct Read {
        ProjectPhase phase;
        int from_index = 0;
        int to_index = 0;
        Position position;
        std::string path;
    };
    std::vector<Read> read;
    for (std::size_t i = 0; i < list->items.size(); ++i) {
        const std::string path = fmt::format("phases[{}]", i);
        MapReader entry(list->items[i], path, diagnostics);
        Read item;
        item.path = path;
        entry.require("workload");
        entry.require("from");
        entry.require("to");
        const bool named = entry.text("workload", item.phase.workload);
        const bool from_read = entry.text("from", item.phase.from);
        const bool to_read = entry.text("to", item.phase.to);
        entry.finish();
        if (named && std::find(names.begin(), names.end(), item.phase.workload) == names.end()) {
            entry.error("workload", fmt::format("no workload of this project is named '{}'{}", item.phase.workload,
                                                did_you_mean(item.phase.workload, names)));
            continue;
        }
        const std::optional<int> from = from_read ? month_index(item.phase.from) : std::nullopt;
        const std::optional<int> to = to_read ? month_index(item.phase.to) : std::nullopt;
        if (from_read && !from) {
            entry.error("from", fmt::format("'{}' is not a month; write YYYY-MM, e.g. 2027-01", item.phase.from));
        }
        if (to_read && !to) {
            entry.error("to", fmt::format("'{}' is not a month; write YYYY-MM, e.g. 2027-02", item.phase.to));
        }
        if (!named || !from || !to) {
            continue;
        }
        if (*to < *from) {
            entry.error("to", fmt::format("{} is before from ({})", item.phase.to, item.phase.from));
            continue;
        }
        for (const Read& earlier : read) {
            if (earlier.phase.workload == item.phase.workload) {
                entry.error("workload", fmt::format("'{}' already has a phase ({}); one phase per workload",
                                                    item.phase.workload, earlier.path));
            }
        }
        item.from_index = *from;
        item.to_index = *to;
        item.position = entry.position_of("to");
        read.push_back(std::move(item));
    }
    if (read.empty()) {
        return;
    }
    int start = read.front().from_index;
    for (const Read& item : read) {
        start = std::min(start, item.from_index);
    }
    for (Read& item : read) {
        item.phase.first_month = item.from_index - start + 1;
        item.phase.last_month = item.to_index - start + 1;
        Workload& workload = *std::find_if(project.workloads.begin(), project.workloads.end(),
                                           [&](const Workload& w) { return w.name == item.phase.workload; });
        const double months = item.phase.months();
        const auto defaulted = std::find_if(workload.assumptions.begin(), workload.assumptions.end(),
                                            [](const Assumption& a) { return a.field == "deployment.horizon"; });
        if (defaulted == workload.assumptions.end() && std::abs(workload.deployment.horizon_months - months) > 0.05) {
            diagnostics.error(item.position, item.path,
                              fmt::format("the phase is {:g} months but '{}' states deployment.horizon {:.3g}mo; "
                                          "remove its horizon (the phase sets it) or make them agree",
                                          months, workload.name, workload.deployment.horizon_months));
            continue;
        }
        workload.deployment.horizon_months = months;
        if (defaulted != workload.assumptions.end()) {
            defaulted->value = fmt::format("{:g}mo", months);
            defaulted->source = fmt::format("its phase, {} to {}", item.phase.from, item.phase.to);
        }
        project.phases.push_back(item.phase);
    }
    std::sort(project.phases.begin(), project.phases.end(),
              [](const ProjectPhase& a, const ProjectPhase& b) { return a.first_month < b.first_month; });
}

}  // namespace

// deployment.deliver_by: the month purchases must have arrived by; order_date, the month they
// are ordered in (the current month unless given, printed as an assumption).
void WorkloadReader::read_delivery(MapReader& reader, DeploymentSpec& deployment) {
    for (const auto& [key, into] : {std::pair<const char*, std::string*>{"deliver_by", &deployment.deliver_by},
                                    {"order_date", &deployment.order_date}}) {
        if (reader.text(key, *into) && !month_index(*into)) {
            reader.error(key, fmt::format("'{}' is not a month; write YYYY-MM, e.g. 2027-03", *into));
            into->clear();
        }
    }
    if (!reader.has("deliver_by")) {
        if (reader.has("order_date")) {
            reader.error("order_date",
                         "order_date dates the order against deployment.deliver_by; add deliver_by "
                         "(YYYY-MM) or remove order_date");
        }
        deployment.order_date.clear();
        return;
    }
    if (deployment.deliver_by.empty()) {
        return;  // malformed, reported above
    }
    if (!reader.has("order_date")) {
        const auto today = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
        const std::chrono::year_month_day date{today};
        deployment.order_date =
            fmt::format("{:04}-{:02}", static_cast<int>(date.year()), static_cast<unsigned>(date.month()));
        assume(reader.child_path("order_date"), deployment.order_date, "this month: purchases ordered now");
    }
    if (!deployment.order_date.empty() && *month_index(deployment.deliver_by) < *month_index(deployment.order_date)) {
        reader.error("deliver_by",
                     fmt::format("{} is before order_date ({})", deployment.deliver_by, deployment.order_date));
    }
}

}  // namespace inputs_detail

std::string_view to_string(WorkloadKind kind) {
    return name_of(kind_names, kind);
}
std::string_view to_string(Role role) {
    return name_of(role_names, role);
}
std::string_view to_string(Objective objective) {
    return name_of(objective_names, objective);
}
std::string_view to_string(Acquisition acquisition) {
    return name_of(acquisition_names, acquisition);
}

bool is_purchase(Acquisition acquisition) {
    return acquisition == Acquisition::buy_new || acquisition == Acquisition::buy_used;
}
std::string_view to_string(Framework framework) {
    return name_of(framework_names, framework);
}
std::string_view to_string(Allocator allocator) {
    return name_of(allocator_names, allocator);
}

Workload load_workload_text(std::string_view text, const std::string& file_name, const LoadContext& context) {
    Diagnostics diagnostics(file_name);
    const YamlNode root = parse_yaml_text(text, file_name, &diagnostics);
    Workload workload = read_workload_node(root, diagnostics, context, directory_of(file_name), "", file_name);
    diagnostics.throw_if_any();
    return workload;
}

Workload load_workload_file(const std::string& path, const LoadContext& context) {
    Diagnostics diagnostics(display_name(path));
    const YamlNode root = read_yaml_file(path, &diagnostics);
    Workload workload = read_workload_node(root, diagnostics, context, directory_of(path), "", display_name(path));
    diagnostics.throw_if_any();
    return workload;
}

Project load_project_file(const std::string& path, const LoadContext& context) {
    Diagnostics diagnostics(display_name(path));
    const YamlNode root = read_yaml_file(path, &diagnostics);
    MapReader top(root, "", diagnostics);
    Project project;
    project.file = display_name(path);
    top.require("project");
    top.require("workloads");
    top.format_version();
    top.text("project", project.name);
    read_workload_list(top, "workloads", project, diagnostics, context, directory_of(path), display_name(path));
    if (diagnostics.empty()) {
        read_phases(top, project, diagnostics);
    } else {
        top.node("phases");  // known; its workloads did not load, so its names cannot be checked
    }
    top.finish();
    diagnostics.throw_if_any();
    return project;
}

Project load_plan_input_file(const std::string& path, const LoadContext& context) {
    Diagnostics diagnostics(display_name(path));
    const YamlNode root = read_yaml_file(path, &diagnostics);
    if (root.kind == YamlNode::Kind::mapping && root.find("project") != nullptr) {
        return load_project_file(path, context);
    }
    Project project;
    project.file = display_name(path);
    project.workloads.push_back(
        read_workload_node(root, diagnostics, context, directory_of(path), "", display_name(path)));
    diagnostics.throw_if_any();
    project.name = project.workloads.front().name;
    return project;
}

DocumentKind detect_document_kind(const std::string& path) {
    Diagnostics ignored(display_name(path));  // the loader reports them
    const YamlNode root = read_yaml_file(path, &ignored);
    if (root.kind == YamlNode::Kind::mapping) {
        for (const char* key : {"gpus", "purchase", "rental", "providers", "hosts"}) {
            if (root.find(key) != nullptr) {
                return DocumentKind::catalog;
            }
        }
        if (root.find("models") != nullptr) {
            return DocumentKind::models;
        }
        if (root.find("proposal") != nullptr || root.find("hardware") != nullptr) {
            return DocumentKind::proposal;
        }
        if (root.find("project") != nullptr) {
            return DocumentKind::project;
        }
        if (root.find("kind") != nullptr || root.find("model") != nullptr || root.find("name") != nullptr) {
            return DocumentKind::workload;
        }
    }
    throw InputError(Diagnostic{display_name(path),
                                root.position,
                                {},
                                "cannot tell what this file is: expected a workload (name, kind, model), a project "
                                "(project, workloads), a proposal (proposal, hardware) or a catalog (gpus)"});
}

}  // namespace gpusel
