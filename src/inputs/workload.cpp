#include "inputs/workload.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "base/units.hpp"
#include "inputs/hf_hub.hpp"
#include "io/yaml.hpp"

namespace gpusel {

void read_model_fields(MapReader& reader, ModelSpec& model);
void complete_model(ModelSpec& model, MapReader& reader);

namespace {

constexpr std::pair<WorkloadKind, std::string_view> kind_names[] = {{WorkloadKind::training, "training"},
                                                                    {WorkloadKind::fine_tuning, "fine-tuning"},
                                                                    {WorkloadKind::inference, "inference"}};
constexpr std::pair<Role, std::string_view> role_names[] = {
    {Role::development, "development"}, {Role::training, "training"}, {Role::inference, "inference"}};
constexpr std::pair<Optimizer, std::string_view> optimizer_names[] = {{Optimizer::adamw, "adamw"},
                                                                      {Optimizer::adam, "adam"},
                                                                      {Optimizer::sgd, "sgd"},
                                                                      {Optimizer::sgd_momentum, "sgd-momentum"},
                                                                      {Optimizer::adamw_8bit, "adamw-8bit"},
                                                                      {Optimizer::adafactor, "adafactor"},
                                                                      {Optimizer::lion, "lion"}};
constexpr std::pair<Checkpointing, std::string_view> checkpointing_names[] = {
    {Checkpointing::none, "none"}, {Checkpointing::selective, "selective"}, {Checkpointing::full, "full"}};
constexpr std::pair<MeasuredMetric, std::string_view> measured_metric_names[] = {
    {MeasuredMetric::training_tokens_per_s, "training_tokens_per_s"},
    {MeasuredMetric::samples_per_s, "samples_per_s"},
    {MeasuredMetric::output_tokens_per_s, "output_tokens_per_s"},
    {MeasuredMetric::decode_tokens_per_s, "decode_tokens_per_s"},
    {MeasuredMetric::prefill_tokens_per_s, "prefill_tokens_per_s"},
    {MeasuredMetric::images_per_s, "images_per_s"},
    {MeasuredMetric::ttft, "ttft"},
    {MeasuredMetric::tpot, "tpot"}};
constexpr std::pair<Sharding, std::string_view> sharding_names[] = {{Sharding::none, "none"},
                                                                    {Sharding::zero1, "zero1"},
                                                                    {Sharding::zero2, "zero2"},
                                                                    {Sharding::zero3, "zero3"},
                                                                    {Sharding::zero3, "fsdp"}};
constexpr std::pair<Offload, std::string_view> offload_names[] = {
    {Offload::none, "none"}, {Offload::optimizer, "optimizer"}, {Offload::optimizer_and_params, "optimizer+params"}};
constexpr std::pair<LossKind, std::string_view> loss_names[] = {
    {LossKind::standard, "standard"}, {LossKind::chunked, "chunked"}, {LossKind::fused, "fused"}};
constexpr std::pair<OptimizerStep, std::string_view> optimizer_step_names[] = {
    {OptimizerStep::foreach, "foreach"}, {OptimizerStep::for_loop, "for-loop"}, {OptimizerStep::fused, "fused"}};
constexpr std::pair<ZeroGrad, std::string_view> zero_grad_names[] = {{ZeroGrad::set_to_none, "set-to-none"},
                                                                     {ZeroGrad::zero, "zero"}};
constexpr std::pair<GradientDtype, std::string_view> gradient_dtype_names[] = {{GradientDtype::automatic, "auto"},
                                                                               {GradientDtype::fp32, "fp32"}};
constexpr std::pair<Framework, std::string_view> framework_names[] = {{Framework::pytorch, "pytorch"},
                                                                      {Framework::pytorch_1, "pytorch-1"},
                                                                      {Framework::megatron, "megatron"},
                                                                      {Framework::llm_c, "llm.c"},
                                                                      {Framework::llama_cpp, "llama.cpp"}};
constexpr std::pair<Allocator, std::string_view> allocator_names[] = {{Allocator::caching, "caching"},
                                                                      {Allocator::static_buffers, "static"}};
constexpr std::pair<Engine, std::string_view> engine_names[] = {
    {Engine::vllm, "vllm"},           {Engine::sglang, "sglang"},           {Engine::tensorrt_llm, "tensorrt-llm"},
    {Engine::llama_cpp, "llama.cpp"}, {Engine::hf_generate, "hf-generate"}, {Engine::automatic, "auto"}};
constexpr std::pair<Decode, std::string_view> decode_names[] = {
    {Decode::none, "none"}, {Decode::cpu, "cpu"}, {Decode::gpu, "gpu"}};
constexpr std::pair<Storage, std::string_view> storage_names[] = {{Storage::hdd, "hdd"},
                                                                  {Storage::sata_ssd, "sata-ssd"},
                                                                  {Storage::nvme, "nvme"},
                                                                  {Storage::network, "network"},
                                                                  {Storage::ram, "ram"}};
constexpr std::pair<DeploymentTarget, std::string_view> target_names[] = {{DeploymentTarget::automatic, "auto"},
                                                                          {DeploymentTarget::on_prem, "on-prem"},
                                                                          {DeploymentTarget::cloud, "cloud"},
                                                                          {DeploymentTarget::hybrid, "hybrid"},
                                                                          {DeploymentTarget::edge, "edge"}};
constexpr std::pair<NetworkKind, std::string_view> network_names[] = {{NetworkKind::automatic, "auto"},
                                                                      {NetworkKind::nvlink, "nvlink"},
                                                                      {NetworkKind::pcie, "pcie"},
                                                                      {NetworkKind::infiniband, "infiniband"},
                                                                      {NetworkKind::ethernet, "ethernet"}};
constexpr std::pair<Objective, std::string_view> objective_names[] = {
    {Objective::tco, "tco"},
    {Objective::time, "time"},
    {Objective::latency, "latency"},
    {Objective::throughput_per_usd, "throughput-per-usd"},
    {Objective::energy, "energy"}};
constexpr std::pair<ProviderTier, std::string_view> tier_names[] = {{ProviderTier::hyperscaler, "hyperscaler"},
                                                                    {ProviderTier::neocloud, "neocloud"},
                                                                    {ProviderTier::marketplace, "marketplace"}};
constexpr std::pair<Site, std::string_view> site_names[] = {
    {Site::datacenter, "datacenter"}, {Site::office, "office"}, {Site::edge, "edge"}};
constexpr std::pair<Acquisition, std::string_view> acquisition_names[] = {
    {Acquisition::buy_new, "buy-new"},
    {Acquisition::buy_used, "buy-used"},
    {Acquisition::cloud_on_demand, "cloud-on-demand"},
    {Acquisition::cloud_spot, "cloud-spot"},
    {Acquisition::cloud_reserved, "cloud-reserved"}};
constexpr std::pair<Segment, std::string_view> segment_names[] = {{Segment::datacenter, "datacenter"},
                                                                  {Segment::workstation, "workstation"},
                                                                  {Segment::consumer, "consumer"},
                                                                  {Segment::edge, "edge"}};
constexpr std::pair<FormFactor, std::string_view> form_factor_names[] = {{FormFactor::sxm, "sxm"},
                                                                         {FormFactor::pcie, "pcie"},
                                                                         {FormFactor::oam, "oam"},
                                                                         {FormFactor::module, "module"},
                                                                         {FormFactor::card, "card"}};

// Stands in for an absent section so that its defaults are applied and recorded.
YamlNode empty_mapping(Position position) {
    YamlNode node;
    node.kind = YamlNode::Kind::mapping;
    node.position = position;
    return node;
}

template <typename Enum, std::size_t N>
std::string_view name_of(const std::pair<Enum, std::string_view> (&table)[N], Enum value) {
    for (const auto& [candidate, name] : table) {
        if (candidate == value) {
            return name;
        }
    }
    return "?";
}

template <typename Enum, std::size_t N>
std::optional<Enum> value_of(const std::pair<Enum, std::string_view> (&table)[N], std::string_view name) {
    for (const auto& [value, candidate] : table) {
        if (candidate == name) {
            return value;
        }
    }
    return std::nullopt;
}

template <typename Enum, std::size_t N>
std::vector<std::string> names_of(const std::pair<Enum, std::string_view> (&table)[N]) {
    std::vector<std::string> names;
    for (const auto& [value, name] : table) {
        names.emplace_back(name);
    }
    return names;
}

// Reads the fields of one workload; `defaults` records each default applied.
class WorkloadReader {
public:
    WorkloadReader(Workload& workload, Diagnostics& diagnostics, const LoadContext& context,
                   std::filesystem::path base_directory, std::string prefix)
        : m_workload(workload),
          m_diagnostics(diagnostics),
          m_context(context),
          m_base(std::move(base_directory)),
          m_prefix(std::move(prefix)) {}

    void read(const YamlNode& root) {
        MapReader top(root, m_prefix, m_diagnostics);
        top.require("name");
        top.require("kind");
        top.require("model");
        int format = 1;
        if (top.integer("format", format, 1, 1000) && format != 1) {
            top.error("format", fmt::format("format {} is not supported; this gpusel reads format 1", format));
        }
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
                top.error("training",
                          "a training section in an inference workload; remove it or set kind: fine-tuning");
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
        }
        read_deployment(top.node("deployment"), top.child_path("deployment"), top.position());
        if (const YamlNode* node = top.node("budget")) {
            MapReader budget(*node, top.child_path("budget"), m_diagnostics);
            budget.number("capex", m_workload.budget.capex_usd, UnitKind::usd, 0, 1e12, true);
            budget.number("monthly", m_workload.budget.monthly_usd, UnitKind::usd, 0, 1e12, true);
            budget.finish();
        }
        read_constraints(top.node("constraints"), top.child_path("constraints"), top.position());
        if (!top.choice("objective", m_workload.objective, objective_names) && !top.has("objective")) {
            assume("objective", "tco", "default");
        }
        if (const YamlNode* node = top.node("calibration")) {
            read_calibration(*node, top.child_path("calibration"));
        }
        top.finish();
    }

private:
    void assume(std::string_view field, std::string_view value, std::string_view source = "default") {
        m_workload.assumptions.push_back(Assumption{std::string(field), std::string(value), std::string(source)});
    }

    void read_model(const YamlNode& node, const std::string& path) {
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
            reader.error("preset",
                         fmt::format("'{}' is a Hugging Face id, not a preset; write hf: {}", preset, preset));
        } else if (has_preset) {
            const ModelSpec* found = m_context.models != nullptr ? m_context.models->find(preset) : nullptr;
            if (found == nullptr) {
                const std::string suggestion = m_context.models != nullptr ? m_context.models->suggest(preset) : "";
                reader.error("preset",
                             fmt::format("unknown model preset '{}'{}; `gpusel models list` shows them", preset,
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
            reader.error("preset",
                         "the model needs a preset, an hf id, an hf_config, or params and architecture fields");
        }
        if (m_workload.model_label.empty()) {
            m_workload.model_label = model.name.empty() ? "custom model" : model.name;
        }
        if (model.name.empty()) {
            model.name = m_workload.model_label;
        }
        reader.finish();
    }

    void read_precision(MapReader& top) {
        const auto read_format = [&](std::string_view key, auto parse, auto& into,
                                     const std::vector<std::string>& names) {
            std::string text;
            if (!top.text(key, text)) {
                return false;
            }
            if (const auto parsed = parse(text)) {
                into = *parsed;
                return true;
            }
            top.error(key,
                      fmt::format("'{}' is not one of {}{}", text, fmt::join(names, ", "), did_you_mean(text, names)));
            return false;
        };
        const std::vector<std::string> precisions = {"fp32", "tf32", "fp16", "bf16", "fp8"};
        const std::vector<std::string> weights = {"fp32",   "fp16", "bf16",   "fp8",  "int8", "int4", "nf4",
                                                  "nf4-dq", "q4_0", "q4_k_m", "q8_0", "awq",  "gptq"};
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
                top.error("precision",
                          fmt::format("'{}' is not one of {}{}", precision_text, fmt::join(precisions, ", "),
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
    void read_precision_options(const YamlNode& node, const std::string& path, const std::vector<std::string>& names) {
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

    // micro_batch: N, `auto` (powers of two to 64) or `A..B` (every integer from A to B).
    void read_micro_batch(MapReader& reader, TrainingSpec& training) {
        const YamlNode* micro = reader.has("micro_batch") ? reader.node("micro_batch") : nullptr;
        if (micro == nullptr || micro->kind != YamlNode::Kind::scalar || micro->quoted ||
            (micro->scalar != "auto" && micro->scalar.find("..") == std::string::npos)) {
            reader.integer("micro_batch", training.micro_batch, 1, 1 << 20);
            if (!reader.has("micro_batch")) {
                assume(reader.child_path("micro_batch"), "1");
            }
            return;
        }
        if (micro->scalar == "auto") {
            for (int value = 1; value <= 64; value *= 2) {
                training.micro_batch_options.push_back(value);
            }
        } else {
            const std::string& text = micro->scalar;
            const std::size_t dots = text.find("..");
            const auto bound = [](std::string_view part) -> std::optional<int> {
                int value = 0;
                const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
                if (error != std::errc() || end != part.data() + part.size() || part.empty() || part.front() == '0') {
                    return std::nullopt;
                }
                return value;
            };
            const std::optional<int> low = bound(std::string_view(text).substr(0, dots));
            const std::optional<int> high = bound(std::string_view(text).substr(dots + 2));
            constexpr int most_options = 256;
            if (!low || !high || *low < 1 || *high < *low || *high - *low >= most_options) {
                reader.error("micro_batch", fmt::format("'{}' is not a micro-batch, `auto` or a range A..B with "
                                                        "1 <= A <= B and at most {} values (e.g. 1..16)",
                                                        text, most_options));
                return;
            }
            for (int value = *low; value <= *high; ++value) {
                training.micro_batch_options.push_back(value);
            }
        }
        training.micro_batch = training.micro_batch_options.front();
    }

    // checkpointing: one level, `auto` (none, selective, full) or a list of levels.
    void read_checkpointing(MapReader& reader, TrainingSpec& training) {
        const YamlNode* node = reader.has("checkpointing") ? reader.node("checkpointing") : nullptr;
        if (node != nullptr && node->kind == YamlNode::Kind::sequence) {
            std::vector<std::string> names;
            for (const auto& [value, name] : checkpointing_names) {
                names.emplace_back(name);
            }
            for (const YamlNode& item : node->items) {
                std::optional<Checkpointing> parsed;
                for (const auto& [value, name] : checkpointing_names) {
                    if (item.kind == YamlNode::Kind::scalar && item.scalar == name) {
                        parsed = value;
                    }
                }
                const std::string text =
                    item.kind == YamlNode::Kind::scalar ? item.scalar : std::string(kind_name(item.kind));
                if (!parsed) {
                    m_diagnostics.error(item.position, reader.child_path("checkpointing"),
                                        fmt::format("'{}' is not one of {}{}", text, fmt::join(names, ", "),
                                                    did_you_mean(text, names)));
                } else if (std::find(training.checkpointing_options.begin(), training.checkpointing_options.end(),
                                     *parsed) != training.checkpointing_options.end()) {
                    m_diagnostics.error(item.position, reader.child_path("checkpointing"),
                                        fmt::format("'{}' is listed twice", text));
                } else {
                    training.checkpointing_options.push_back(*parsed);
                }
            }
            if (node->items.empty()) {
                m_diagnostics.error(node->position, reader.child_path("checkpointing"),
                                    "an empty list; give a level, auto, or a list of levels");
            } else if (!training.checkpointing_options.empty()) {
                training.checkpointing = training.checkpointing_options.front();
            }
            return;
        }
        if (node != nullptr && node->kind == YamlNode::Kind::scalar && !node->quoted && node->scalar == "auto") {
            training.checkpointing_options = {Checkpointing::none, Checkpointing::selective, Checkpointing::full};
            // Megatron-Core's recommended default (--recompute-activations): what a single-layout
            // command such as `gpusel memory` estimates.
            training.checkpointing = Checkpointing::selective;
            assume(reader.child_path("checkpointing"), "selective", "auto: the planner tries none, selective and full");
            return;
        }
        reader.choice("checkpointing", training.checkpointing, checkpointing_names);
        if (!reader.has("checkpointing")) {
            assume(reader.child_path("checkpointing"), "none");
        }
    }

    void read_training(const YamlNode& node, const std::string& path) {
        MapReader reader(node, path, m_diagnostics);
        TrainingSpec& training = m_workload.training;
        const auto defaulted = [&](std::string_view key, std::string_view value) {
            if (!reader.has(key)) {
                assume(reader.child_path(key), value);
            }
        };
        reader.choice("optimizer", training.optimizer, optimizer_names);
        defaulted("optimizer", "adamw");
        const bool low_precision = m_workload.precision != Precision::fp32 && m_workload.precision != Precision::tf32;
        training.master_weights = low_precision;
        if (!reader.boolean("master_weights", training.master_weights) && !reader.has("master_weights") &&
            low_precision) {
            assume(reader.child_path("master_weights"), "true", "mixed precision");
        }
        read_micro_batch(reader, training);
        reader.integer("global_batch", training.global_batch, 1, 1 << 30);
        const bool transformer = m_workload.model.is_transformer();
        if (transformer) {
            training.seq_len = m_workload.model.max_context > 0 ? std::min(m_workload.model.max_context, 2048) : 2048;
        }
        if (!reader.integer("seq_len", training.seq_len, 1, 1 << 24) && !reader.has("seq_len") && transformer) {
            assume(reader.child_path("seq_len"), std::to_string(training.seq_len));
        }
        read_checkpointing(reader, training);
        reader.boolean("flash_attention", training.flash_attention);
        if (transformer) {
            defaulted("flash_attention", "true");
        }
        training.sharding_given = reader.choice("sharding", training.sharding, sharding_names);
        reader.choice("offload", training.offload, offload_names);
        read_parallel(reader, "tensor_parallel", training.tensor_parallel);
        read_parallel(reader, "pipeline_parallel", training.pipeline_parallel);
        reader.integer("virtual_stages", training.virtual_stages, 1, 1024);
        if (reader.integer("context_parallel", training.context_parallel, 1, 1024) && training.context_parallel > 1) {
            // Megatron-Core splits each sequence into 2·cp chunks and gives each rank a chunk from
            // each end, so the causal work balances (docs/perf-model.md, "Context parallelism").
            if (!transformer) {
                reader.error("context_parallel",
                             "context parallelism splits a transformer's sequence; this model has none");
            } else if (training.seq_len % (2 * training.context_parallel) != 0) {
                reader.error("context_parallel",
                             fmt::format("seq_len {} must be a multiple of 2 × context_parallel ({})", training.seq_len,
                                         2 * training.context_parallel));
            } else if (!training.flash_attention) {
                reader.error("context_parallel",
                             "ring attention runs on the fused attention kernels: "
                             "set flash_attention: true");
            }
        }
        if (const YamlNode* lora = reader.node("lora")) {
            MapReader lora_reader(*lora, reader.child_path("lora"), m_diagnostics);
            lora_reader.require("rank");
            lora_reader.integer("rank", training.lora.rank, 1, 65536);
            if (const YamlNode* targets = lora_reader.node("targets");
                targets != nullptr && targets->kind == YamlNode::Kind::scalar) {
                if (targets->scalar == "all-linear") {
                    training.lora.targets = {"all-linear"};
                } else {
                    lora_reader.error("targets",
                                      fmt::format("'{}' is not a list of modules or all-linear", targets->scalar));
                }
            } else if (!lora_reader.text_list("targets", training.lora.targets) && !lora_reader.has("targets")) {
                training.lora.targets = {"q_proj", "k_proj", "v_proj", "o_proj"};
                assume(lora_reader.child_path("targets"), "[q_proj, k_proj, v_proj, o_proj]");
            }
            lora_reader.finish();
            if (m_workload.kind == WorkloadKind::training) {
                reader.error("lora", "LoRA adapters need kind: fine-tuning");
            }
        }
        read_implementation(reader);
        reader.number("dataset_tokens", training.dataset_tokens, UnitKind::count, 0, 1e16, true);
        reader.number("dataset_samples", training.dataset_samples, UnitKind::count, 0, 1e15, true);
        if (reader.has("dataset_tokens") && reader.has("dataset_samples")) {
            reader.error("dataset_samples", "give dataset_tokens or dataset_samples, not both");
        }
        reader.number("epochs", training.epochs, UnitKind::plain, 0, 1e6, true);
        reader.integer("runs", training.runs, 1, 100000);
        defaulted("runs", "1");
        const bool deadline =
            reader.number("deadline", training.deadline_seconds, UnitKind::seconds, 0, 100 * 365.25 * 86400, true);
        // Without the amount of data there is no time to train, and every candidate would pass.
        if (deadline && training.deadline_seconds > 0 && !reader.has("dataset_tokens") &&
            !reader.has("dataset_samples")) {
            reader.error("deadline", "a deadline needs dataset_tokens or dataset_samples to judge the time to train");
        }
        reader.finish();
    }

    // The software's implementation choices; each default comes from runtime.framework
    // (docs/memory-model.md, "Software behaviours", gives the source of each).
    void read_implementation(MapReader& reader) {
        TrainingSpec& training = m_workload.training;
        const Framework framework = m_workload.runtime.framework;
        const std::string from = fmt::format("{} default", to_string(framework));
        const auto defaulted = [&](std::string_view key, std::string_view value) {
            if (!reader.has(key)) {
                assume(reader.child_path(key), value, from);
            }
        };
        training.loss = framework == Framework::llm_c ? LossKind::fused : LossKind::standard;
        reader.choice("loss", training.loss, loss_names);
        defaulted("loss", to_string(training.loss));
        training.optimizer_step = framework == Framework::pytorch     ? OptimizerStep::foreach
                                  : framework == Framework::pytorch_1 ? OptimizerStep::for_loop
                                                                      : OptimizerStep::fused;
        reader.choice("optimizer_step", training.optimizer_step, optimizer_step_names);
        defaulted("optimizer_step", to_string(training.optimizer_step));
        training.zero_grad = framework == Framework::pytorch ? ZeroGrad::set_to_none : ZeroGrad::zero;
        reader.choice("zero_grad", training.zero_grad, zero_grad_names);
        defaulted("zero_grad", to_string(training.zero_grad));
        // FP8 training in Megatron runs on bf16 parameters (--bf16 with --fp8-format), so it keeps
        // the fp32 main_grad buffers of bf16.
        const bool bf16_parameters = m_workload.precision == Precision::bf16 || m_workload.precision == Precision::fp8;
        training.gradient_dtype =
            framework == Framework::megatron && bf16_parameters ? GradientDtype::fp32 : GradientDtype::automatic;
        reader.choice("gradient_dtype", training.gradient_dtype, gradient_dtype_names);
        defaulted("gradient_dtype", to_string(training.gradient_dtype));
        training.recompute_ffn_activation = framework == Framework::llm_c;
        reader.boolean("recompute_ffn_activation", training.recompute_ffn_activation);
        if (m_workload.model.is_transformer()) {
            defaulted("recompute_ffn_activation", training.recompute_ffn_activation ? "true" : "false");
        }
    }

    void read_runtime(const YamlNode* node, const std::string& path, Position parent) {
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

    // runtime.engine and its knobs. LLM serving (a decoder served) defaults to vLLM, the engine
    // most deployments run; llama.cpp as framework means the llama.cpp engine.
    void read_engine(MapReader& reader) {
        RuntimeSpec& runtime = m_workload.runtime;
        const ModelFamily family = m_workload.model.family;
        const bool llm_serving = m_workload.kind == WorkloadKind::inference && m_workload.model.is_transformer() &&
                                 (family == ModelFamily::decoder || family == ModelFamily::moe_decoder);
        reader.choice("engine", runtime.engine, engine_names);
        if (runtime.engine == Engine::automatic && llm_serving) {
            runtime.engine = runtime.framework == Framework::llama_cpp ? Engine::llama_cpp : Engine::vllm;
            assume(reader.child_path("engine"), to_string(runtime.engine), "LLM serving default");
        }
        if (runtime.engine == Engine::automatic && m_workload.kind == WorkloadKind::inference && !llm_serving &&
            !reader.has("engine")) {
            // Encoders, CNNs, recommenders and diffusion pipelines are served compiled; the perf
            // model's optimized stack (docs/perf-model.md) stands for these engines.
            assume(reader.child_path("engine"), "auto",
                   "an optimised engine: TensorRT, ONNX Runtime or torch.compile; hf-generate = PyTorch eager");
        }
        if (runtime.engine == Engine::llama_cpp && runtime.framework != Framework::llama_cpp) {
            runtime.framework = Framework::llama_cpp;  // the engine is the framework: static buffers
            runtime.allocator = Allocator::static_buffers;
        }
        const bool paged = is_paged_engine(runtime.engine);
        for (const char* key : {"gpu_memory_utilization", "max_model_len", "max_num_seqs", "max_num_batched_tokens",
                                "block_size", "cuda_graphs"}) {
            if (reader.has(key) && !paged) {
                reader.error(key, fmt::format("runtime.{} is a knob of a paged serving engine (vllm, sglang, "
                                              "tensorrt-llm); runtime.engine is {}",
                                              key, to_string(runtime.engine)));
            }
        }
        if (!paged) {
            return;
        }
        reader.number("gpu_memory_utilization", runtime.gpu_memory_utilization, UnitKind::plain, 0.05, 1.0);
        reader.integer("max_model_len", runtime.max_model_len, 1, 1 << 24);
        reader.integer("max_num_seqs", runtime.max_num_seqs, 1, 1 << 20);
        reader.integer("max_num_batched_tokens", runtime.max_num_batched_tokens, 1, 1 << 24);
        reader.integer("block_size", runtime.block_size, 1, 4096);
        reader.boolean("cuda_graphs", runtime.cuda_graphs);
    }

    void read_parallel(MapReader& reader, std::string_view key, int& into) {
        if (const YamlNode* node = reader.node(key);
            node != nullptr && node->kind == YamlNode::Kind::scalar && node->scalar == "auto") {
            into = 0;
            return;
        }
        reader.integer(key, into, 1, 4096);
    }

    // Denoising steps and classifier-free guidance: defaults of diffusers'
    // StableDiffusionXLPipeline (num_inference_steps 50, guidance_scale 5.0 > 1, so CFG runs).
    template <typename Defaulted>
    void read_diffusion(MapReader& reader, const Defaulted& defaulted) {
        InferenceSpec& inference = m_workload.inference;
        const bool diffusion = m_workload.model.family == ModelFamily::diffusion;
        for (const std::string_view key : {"steps", "guidance"}) {
            if (reader.node(key) != nullptr && !diffusion) {
                reader.error(key, fmt::format("inference.{} applies to diffusion models; {} is a {} model", key,
                                              m_workload.model_label, to_string(m_workload.model.family)));
            }
        }
        if (!diffusion) {
            return;
        }
        reader.integer("steps", inference.denoising_steps, 1, 10000);
        defaulted("steps", "50");
        reader.boolean("guidance", inference.classifier_free_guidance);
        defaulted("guidance", "true");
    }

    void read_inference(const YamlNode& node, const std::string& path) {
        MapReader reader(node, path, m_diagnostics);
        InferenceSpec& inference = m_workload.inference;
        const auto defaulted = [&](std::string_view key, std::string_view value) {
            if (!reader.has(key)) {
                assume(reader.child_path(key), value);
            }
        };
        const ModelSpec& model = m_workload.model;
        // Encoders (embedding, classification, reranking) produce no tokens: their default is 0.
        // A decoder with output_tokens 0 is prefill-only scoring.
        const bool generates = model.is_transformer() && model.family != ModelFamily::encoder;
        inference.output_tokens = generates ? 256 : 0;
        reader.integer("input_tokens", inference.input_tokens, 1, 1 << 24);
        if (model.is_transformer()) {
            defaulted("input_tokens", "512");  // CNNs, recommenders and diffusion read no tokens
        }
        reader.integer("output_tokens", inference.output_tokens, 0, 1 << 24);
        if (model.is_transformer()) {
            defaulted("output_tokens", generates ? "256" : "0");
        }
        if (!generates && inference.output_tokens > 0 && model.is_transformer()) {
            // An encoder reads its input in one pass: nothing to generate, whatever the file says.
            assume(reader.child_path("output_tokens"), "0",
                   fmt::format("{} models generate no tokens; {} ignored", to_string(model.family),
                               inference.output_tokens));
            inference.output_tokens = 0;
        }
        // The model's position table bounds a request (BERT: 512 positions).
        if (model.max_context > 0 && inference.input_tokens + inference.output_tokens > model.max_context) {
            reader.error(reader.has("input_tokens") ? "input_tokens" : "output_tokens",
                         fmt::format("input_tokens + output_tokens = {} exceeds the model's {} positions (max_context)",
                                     inference.input_tokens + inference.output_tokens, model.max_context));
        }
        if (const YamlNode* batch = reader.node("batch"); batch != nullptr && batch->scalar == "auto") {
            inference.batch = 0;
        } else {
            reader.integer("batch", inference.batch, 1, 1 << 20);
        }
        // The tensor-parallel degree of one replica, as deployed or measured; auto = the fewest GPUs that hold it.
        if (const YamlNode* tp = reader.node("tensor_parallel"); tp != nullptr && tp->scalar == "auto") {
            inference.tensor_parallel = 0;
        } else {
            reader.integer("tensor_parallel", inference.tensor_parallel, 1, 1024);
        }
        reader.number("requests_per_s", inference.requests_per_s, UnitKind::plain, 0, 1e9, true);
        defaulted("requests_per_s", "1");
        read_diffusion(reader, defaulted);
        if (const YamlNode* slo = reader.node("slo")) {
            MapReader slo_reader(*slo, reader.child_path("slo"), m_diagnostics);
            slo_reader.number("ttft", inference.slo.ttft_seconds, UnitKind::seconds, 0, 86400, true);
            slo_reader.number("tpot", inference.slo.tpot_seconds, UnitKind::seconds, 0, 3600, true);
            slo_reader.number("e2e", inference.slo.e2e_seconds, UnitKind::seconds, 0, 86400, true);
            slo_reader.number("percentile", inference.slo.percentile, UnitKind::plain, 50, 99.99);
            if (!slo_reader.has("percentile")) {
                assume(slo_reader.child_path("percentile"), "99");
            }
            if (inference.slo.tpot_seconds > 0 && m_workload.task() != InferenceTask::generation) {
                // Nothing is generated, so there is no time per output token to hold.
                assume(slo_reader.child_path("tpot"), "ignored",
                       fmt::format("a {} workload generates no tokens", to_string(m_workload.task())));
                inference.slo.tpot_seconds = 0;
            }
            slo_reader.finish();
        }
        reader.finish();
    }

    void read_data(const YamlNode& node, const std::string& path) {
        MapReader reader(node, path, m_diagnostics);
        DataSpec& data = m_workload.data;
        data.given = true;
        reader.number("sample_bytes", data.sample_bytes, UnitKind::bytes, 0, 1e12);
        reader.choice("decode", data.decode, decode_names);
        reader.integer("cpu_cores", data.cpu_cores, 1, 100000);
        reader.number("cpu_samples_per_s_per_core", data.cpu_samples_per_s_per_core, UnitKind::plain, 0, 1e9, true);
        reader.choice("storage", data.storage, storage_names);
        reader.boolean("pin_memory", data.pin_memory);
        reader.integer("loader_workers", data.loader_workers, 0, 100000);
        reader.finish();
    }

    void read_deployment(const YamlNode* node, const std::string& path, Position parent) {
        const YamlNode empty = empty_mapping(parent);
        MapReader reader(node != nullptr ? *node : empty, path, m_diagnostics);
        DeploymentSpec& deployment = m_workload.deployment;
        const auto defaulted = [&](std::string_view key, const std::string& value) {
            if (!reader.has(key)) {
                assume(reader.child_path(key), value);
            }
        };
        reader.choice("target", deployment.target, target_names);
        double horizon_seconds = 0;
        if (reader.number("horizon", horizon_seconds, UnitKind::seconds, 86400, 30 * 365.25 * 86400)) {
            deployment.horizon_months = horizon_seconds / seconds_per_month;
        }
        defaulted("horizon", "24mo");
        reader.number("utilization", deployment.utilization, UnitKind::fraction, 0, 1, true);
        defaulted("utilization", "0.7");
        reader.number("energy_price", deployment.energy_usd_per_kwh, UnitKind::usd_per_kwh, 0, 10);
        defaulted("energy_price", "0.12USD/kWh");
        reader.number("pue", deployment.pue, UnitKind::plain, 1, 5);
        if (!reader.has("pue")) {
            assume(reader.child_path("pue"), "1.4", "data centre; 1.0 for a desk-side box or an edge device");
        }
        reader.number("ops_per_gpu_month", deployment.ops_usd_per_gpu_month, UnitKind::usd, 0, 1e6);
        if (!reader.has("ops_per_gpu_month") && deployment.target == DeploymentTarget::edge) {
            // The $150 default is datacenter staff and facility per GPU; an edge device's upkeep
            // is the site's, so it is left out unless given.
            deployment.ops_usd_per_gpu_month = 0;
            assume(reader.child_path("ops_per_gpu_month"), "0USD", "edge device: site upkeep not included");
        } else {
            if (!reader.has("ops_per_gpu_month")) {
                assume(reader.child_path("ops_per_gpu_month"), "150USD",
                       "data centre; 0 for a desk-side box, whose upkeep is the office's");
            }
        }
        reader.choice("interconnect", deployment.interconnect, network_names);
        reader.number("spot_overhead", deployment.spot_overhead_fraction, UnitKind::fraction, 0, 5);
        reader.boolean("used_market", deployment.used_market);
        deployment.ops_given = reader.has("ops_per_gpu_month");
        deployment.pue_given = reader.has("pue");
        read_money_conventions(reader, deployment);
        Site site = Site::datacenter;
        if (reader.choice("site", site, site_names)) {
            deployment.site = site;
        } else if (!reader.has("site")) {
            assume(reader.child_path("site"),
                   deployment.target == DeploymentTarget::edge ? "edge"
                   : m_workload.role == Role::inference        ? "datacenter"
                                                               : "datacenter or office",
                   deployment.target == DeploymentTarget::edge ? "edge target"
                   : m_workload.role == Role::inference        ? "production serving"
                                                               : "a desk-side box is allowed");
        }
        reader.finish();
    }

    // Autoscale, redundancy, seats and resale (docs/cost-model.md).
    void read_money_conventions(MapReader& reader, DeploymentSpec& deployment) {
        const bool serving = m_workload.role == Role::inference;
        reader.boolean("autoscale", deployment.autoscale);
        if (!reader.has("autoscale") && serving) {
            assume(reader.child_path("autoscale"), "false", "rented replicas are billed every hour");
        }
        reader.integer("min_replicas", deployment.min_replicas, 1, 1 << 20);
        std::string redundancy;
        if (reader.text("redundancy", redundancy)) {
            if (redundancy == "none") {
                deployment.redundancy = DeploymentSpec::Redundancy::none;
            } else if (redundancy == "n+1") {
                deployment.redundancy = DeploymentSpec::Redundancy::n_plus_one;
            } else if (!redundancy.empty() && redundancy.back() == '%') {
                double fraction = 0;
                if (read_number(*reader.node("redundancy"), reader.child_path("redundancy"), m_diagnostics, fraction,
                                UnitKind::fraction, 0, 10, true)) {
                    deployment.redundancy = DeploymentSpec::Redundancy::fraction;
                    deployment.redundancy_fraction = fraction;
                }
            } else {
                reader.error("redundancy", fmt::format("'{}' is not a redundancy; write none, n+1 or a percentage "
                                                       "such as 25%",
                                                       redundancy));
            }
        } else if (!reader.has("redundancy") && serving && deployment.target != DeploymentTarget::edge) {
            deployment.redundancy = DeploymentSpec::Redundancy::n_plus_one;
            assume(reader.child_path("redundancy"), "n+1", "production serving: one replica may fail or be updated");
        }
        reader.integer("seats", deployment.seats, 1, 100000);
        if (reader.has("seats") && m_workload.role != Role::development) {
            reader.error("seats", "seats count the engineers of a development role; this workload's role is " +
                                      std::string(to_string(m_workload.role)));
        }
        reader.boolean("count_resale", deployment.count_resale);
        if (!reader.has("count_resale")) {
            assume(reader.child_path("count_resale"), "false", "expected resale is reported, not subtracted");
        }
    }

    void check_ids(MapReader& reader, std::string_view key, const std::vector<std::string>& ids) {
        if (m_context.catalog == nullptr) {
            return;
        }
        for (const std::string& id : ids) {
            if (m_context.catalog->find(id) == nullptr) {
                const std::string suggestion = m_context.catalog->suggest(id);
                reader.error(key, fmt::format("unknown GPU '{}'{}", id,
                                              suggestion.empty() ? "; `gpusel catalog list` shows the ids"
                                                                 : ", did you mean '" + suggestion + "'?"));
            }
        }
    }

    template <typename Enum, std::size_t N>
    void read_enum_list(MapReader& reader, std::string_view key, std::vector<Enum>& into,
                        const std::pair<Enum, std::string_view> (&table)[N]) {
        std::vector<std::string> names;
        if (!reader.text_list(key, names)) {
            return;
        }
        for (const std::string& name : names) {
            if (const std::optional<Enum> value = value_of(table, name)) {
                into.push_back(*value);
            } else {
                const std::vector<std::string> options = names_of(table);
                reader.error(key, fmt::format("'{}' is not one of {}{}", name, fmt::join(options, ", "),
                                              did_you_mean(name, options)));
            }
        }
    }

    void read_constraints(const YamlNode* node, const std::string& path, Position parent) {
        const YamlNode empty = empty_mapping(parent);
        MapReader reader(node != nullptr ? *node : empty, path, m_diagnostics);
        ConstraintSpec& constraints = m_workload.constraints;
        reader.integer("max_gpus", constraints.max_gpus, 1, 1 << 20);
        if (!reader.has("max_gpus")) {
            assume(reader.child_path("max_gpus"), "64");
        }
        reader.integer("gpus_per_node", constraints.gpus_per_node, 1, 1024);
        if (reader.text_list("allow", constraints.allow)) {
            check_ids(reader, "allow", constraints.allow);
        }
        if (reader.text_list("deny", constraints.deny)) {
            check_ids(reader, "deny", constraints.deny);
        }
        read_enum_list(reader, "segment", constraints.segments, segment_names);
        read_enum_list(reader, "form_factor", constraints.form_factors, form_factor_names);
        if (reader.text_list("vendor", constraints.vendors)) {
            const std::vector<std::string> known = {"nvidia", "amd", "intel", "google"};
            for (const std::string& vendor : constraints.vendors) {
                if (std::find(known.begin(), known.end(), vendor) == known.end()) {
                    reader.error("vendor", fmt::format("'{}' is not one of {}{}", vendor, fmt::join(known, ", "),
                                                       did_you_mean(vendor, known)));
                }
            }
        }
        reader.number("max_power_per_device", constraints.max_power_per_device_watts, UnitKind::watts, 0, 1e5, true);
        reader.number("memory_headroom", constraints.memory_headroom_fraction, UnitKind::fraction, 0, 0.9);
        if (!reader.has("memory_headroom")) {
            assume(reader.child_path("memory_headroom"), "10%");
        }
        read_offer_constraints(reader);
        reader.finish();
    }

    void read_offer_constraints(MapReader& reader) {
        ConstraintSpec& constraints = m_workload.constraints;
        const auto check_providers = [&](std::string_view key, const std::vector<std::string>& ids) {
            if (m_context.catalog == nullptr) {
                return;
            }
            std::vector<std::string> known;
            for (const Provider& provider : m_context.catalog->providers()) {
                known.push_back(provider.id);
            }
            for (const std::string& id : ids) {
                if (m_context.catalog->find_provider(id) == nullptr) {
                    reader.error(key, fmt::format("unknown provider '{}'{}", id, did_you_mean(id, known)));
                }
            }
        };
        if (reader.text_list("providers", constraints.providers)) {
            check_providers("providers", constraints.providers);
        }
        if (reader.text_list("exclude_providers", constraints.exclude_providers)) {
            check_providers("exclude_providers", constraints.exclude_providers);
        }
        read_enum_list(reader, "tiers", constraints.tiers, tier_names);
        if (!reader.has("tiers") && m_workload.role == Role::inference) {
            // A production service needs an SLA and capacity that stays: marketplace hosts are
            // third parties whose prices and machines change by the hour (docs/catalog.md).
            constraints.tiers = {ProviderTier::hyperscaler, ProviderTier::neocloud};
            assume(reader.child_path("tiers"), "[hyperscaler, neocloud]", "production serving: no marketplace hosts");
        }
        reader.text_list("regions", constraints.regions);
        read_enum_list(reader, "acquisitions", constraints.acquisitions, acquisition_names);
        reader.boolean("allow_estimates", constraints.allow_estimates);
        if (!reader.has("allow_estimates")) {
            assume(reader.child_path("allow_estimates"), "true", "estimated prices rank, marked ~");
        }
        double age_seconds = 0;
        if (reader.number("max_offer_age", age_seconds, UnitKind::seconds, 0, 100 * 365.25 * 86400, true)) {
            constraints.max_offer_age_months = age_seconds / seconds_per_month;
        } else if (!reader.has("max_offer_age")) {
            assume(reader.child_path("max_offer_age"), "36mo");
        }
    }

    void read_calibration(const YamlNode& node, const std::string& path) {
        MapReader reader(node, path, m_diagnostics);
        const auto read_points = [&](std::string_view key, auto&& read_point) {
            const YamlNode* list = reader.node(key);
            if (list == nullptr) {
                return;
            }
            if (list->kind != YamlNode::Kind::sequence) {
                reader.error(key, fmt::format("expected a list of measured points, got {}", kind_name(list->kind)));
                return;
            }
            for (std::size_t i = 0; i < list->items.size(); ++i) {
                MapReader point(list->items[i], fmt::format("{}[{}]", reader.child_path(key), i), m_diagnostics);
                read_point(point);
                point.finish();
            }
        };
        read_points("memory", [&](MapReader& point) {
            MemoryCalibrationPoint value;
            point.require("gpu");
            point.require("micro_batch");
            point.require("peak");
            if (point.text("gpu", value.gpu)) {
                check_ids(point, "gpu", {value.gpu});
            }
            point.integer("micro_batch", value.micro_batch, 1, 1 << 20);
            point.number("peak", value.peak_bytes, UnitKind::bytes, 0, 1e13, true);
            m_workload.calibration.memory.push_back(value);
        });
        // `throughput: [{gpu, batch, tokens_per_s}]`: tokens/s of the whole job on one GPU.
        read_points("throughput", [&](MapReader& point) {
            SpeedCalibrationPoint value = speed_point_origin(point);
            point.require("gpu");
            point.require("tokens_per_s");
            if (point.text("gpu", value.gpu)) {
                check_ids(point, "gpu", {value.gpu});
            }
            point.integer("batch", value.batch, 1, 1 << 20);
            point.number("tokens_per_s", value.measured, UnitKind::plain, 0, 1e12, true);
            value.metric = m_workload.is_training() ? MeasuredMetric::training_tokens_per_s : MeasuredMetric::output_tokens_per_s;
            m_workload.calibration.speed.push_back(value);
        });
        read_points("speed", [&](MapReader& point) { read_speed_point(point); });
        reader.finish();
    }

    SpeedCalibrationPoint speed_point_origin(const MapReader& point) const {
        SpeedCalibrationPoint value;
        value.where.file = m_diagnostics.file();
        value.where.position = point.position();
        value.where.path = point.path();
        return value;
    }

    // {gpu, count, metric, measured, batch} typed in, or {gpu, count, vllm_benchmark: FILE}.
    void read_speed_point(MapReader& point) {
        SpeedCalibrationPoint value = speed_point_origin(point);
        point.require("gpu");
        if (point.text("gpu", value.gpu)) {
            check_ids(point, "gpu", {value.gpu});
        }
        point.integer("count", value.count, 1, 1 << 20);
        point.integer("batch", value.batch, 1, 1 << 20);
        std::string file;
        if (point.text("vllm_benchmark", file)) {
            if (point.has("metric") || point.has("measured")) {
                point.error("vllm_benchmark", "give either vllm_benchmark or metric and measured, not both");
                return;
            }
            read_vllm_benchmark(point, file, value);
            return;
        }
        point.require("metric");
        point.require("measured");
        point.choice("metric", value.metric, measured_metric_names);
        const bool time = value.metric == MeasuredMetric::ttft || value.metric == MeasuredMetric::tpot;
        point.number("measured", value.measured, time ? UnitKind::seconds : UnitKind::plain, 0, 1e12, true);
        if (value.measured > 0) {
            m_workload.calibration.speed.push_back(value);
        }
    }

    // A `vllm bench serve --save-result` file: output tokens/s of the whole run, at its
    // max_concurrency when recorded (the batch the engine ran).
    void read_vllm_benchmark(MapReader& point, const std::string& file, SpeedCalibrationPoint& value) {
        const std::filesystem::path path = (m_base / file).lexically_normal();
        value.from = path.string();
        nlohmann::json json;
        try {
            json = nlohmann::json::parse(read_input_file(path.string()));
        } catch (const InputError& error) {
            point.error("vllm_benchmark", error.diagnostics().empty() ? std::string(error.what())
                                                                       : error.diagnostics().front().message);
            return;
        } catch (const nlohmann::json::exception&) {
            point.error("vllm_benchmark", fmt::format("{} is not JSON (expected a vLLM benchmark result)", path.string()));
            return;
        }
        const auto output = json.find("output_throughput");
        if (!json.is_object() || output == json.end() || !output->is_number() || output->get<double>() <= 0) {
            point.error("vllm_benchmark",
                        fmt::format("{} has no positive output_throughput (vllm bench serve --save-result writes it)",
                                    path.string()));
            return;
        }
        value.metric = MeasuredMetric::output_tokens_per_s;
        value.measured = output->get<double>();
        const auto concurrency = json.find("max_concurrency");
        if (value.batch == 0 && concurrency != json.end() && concurrency->is_number_integer() &&
            concurrency->get<long long>() >= 1 && concurrency->get<long long>() <= (1 << 20)) {
            value.batch = static_cast<int>(concurrency->get<long long>());
        }
        m_workload.calibration.speed.push_back(value);
    }

    Workload& m_workload;
    Diagnostics& m_diagnostics;
    const LoadContext& m_context;
    std::filesystem::path m_base;
    std::string m_prefix;
};

std::filesystem::path directory_of(const std::string& path) {
    if (path == "-" || path.empty()) {
        return std::filesystem::current_path();
    }
    return std::filesystem::path(path).parent_path();
}

std::string display_name(const std::string& path) {
    return path == "-" ? "<stdin>" : path;
}

Workload read_workload_node(const YamlNode& root, Diagnostics& diagnostics, const LoadContext& context,
                            const std::filesystem::path& base, const std::string& prefix, const std::string& file) {
    Workload workload;
    workload.file = file;
    WorkloadReader reader(workload, diagnostics, context, base, prefix);
    reader.read(root);
    return workload;
}

// Reads the `workloads:` list of a project or proposal into `project`.
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
}

}  // namespace

std::string_view to_string(WorkloadKind kind) {
    return name_of(kind_names, kind);
}
std::string_view to_string(Role role) {
    return name_of(role_names, role);
}
std::string_view to_string(Optimizer optimizer) {
    return name_of(optimizer_names, optimizer);
}
std::string_view to_string(Checkpointing checkpointing) {
    return name_of(checkpointing_names, checkpointing);
}
std::string_view to_string(Sharding sharding) {
    return name_of(sharding_names, sharding);
}
std::string_view to_string(Offload offload) {
    return name_of(offload_names, offload);
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
std::string_view to_string(LossKind loss) {
    return name_of(loss_names, loss);
}
std::string_view to_string(OptimizerStep step) {
    return name_of(optimizer_step_names, step);
}
std::string_view to_string(ZeroGrad zero_grad) {
    return name_of(zero_grad_names, zero_grad);
}
std::string_view to_string(GradientDtype dtype) {
    return name_of(gradient_dtype_names, dtype);
}
std::string_view to_string(Framework framework) {
    return name_of(framework_names, framework);
}
std::string_view to_string(Allocator allocator) {
    return name_of(allocator_names, allocator);
}
std::string_view to_string(Engine engine) {
    return name_of(engine_names, engine);
}
std::string_view to_string(MeasuredMetric metric) {
    return name_of(measured_metric_names, metric);
}
std::optional<MeasuredMetric> parse_measured_metric(std::string_view name) {
    for (const auto& [value, text] : measured_metric_names) {
        if (text == name) {
            return value;
        }
    }
    return std::nullopt;
}
bool is_paged_engine(Engine engine) {
    return engine == Engine::vllm || engine == Engine::sglang || engine == Engine::tensorrt_llm;
}

std::string_view to_string(InferenceTask task) {
    switch (task) {
    case InferenceTask::generation:
        return "generation";
    case InferenceTask::scoring:
        return "scoring";
    case InferenceTask::encoder:
        return "encoder";
    case InferenceTask::diffusion:
        return "diffusion";
    case InferenceTask::vision:
        return "vision";
    case InferenceTask::recommendation:
        return "recommendation";
    }
    return "generation";
}

InferenceTask Workload::task() const {
    switch (model.family) {
    case ModelFamily::diffusion:
        return InferenceTask::diffusion;
    case ModelFamily::cnn:
    case ModelFamily::vit:
        return InferenceTask::vision;
    case ModelFamily::encoder:
        return InferenceTask::encoder;
    case ModelFamily::other:
        return model.is_transformer() ? InferenceTask::encoder : InferenceTask::recommendation;
    default:
        break;
    }
    if (!model.is_transformer()) {
        return InferenceTask::recommendation;
    }
    return inference.output_tokens > 0 ? InferenceTask::generation : InferenceTask::scoring;
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
    int format = 1;
    if (top.integer("format", format, 1, 1000) && format != 1) {
        top.error("format", fmt::format("format {} is not supported; this gpusel reads format 1", format));
    }
    top.text("project", project.name);
    read_workload_list(top, "workloads", project, diagnostics, context, directory_of(path), display_name(path));
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

namespace {

// An offer named by a hardware entry: it gives the GPU and the acquisition when the entry does
// not.
void read_hardware_offer(MapReader& entry, ProposedHardware& item, const LoadContext& context) {
    if (!entry.text("offer", item.offer) || context.catalog == nullptr) {
        return;
    }
    const Offer* offer = context.catalog->find_offer(item.offer);
    if (offer == nullptr) {
        const std::string suggestion = context.catalog->suggest_offer(item.offer);
        entry.error("offer", fmt::format("unknown offer '{}'{}", item.offer,
                                         suggestion.empty() ? "; `gpusel catalog show GPU` lists a GPU's offers"
                                                            : ", did you mean '" + suggestion + "'?"));
        return;
    }
    if (!entry.has("gpu")) {
        item.gpu = offer->gpu;
    }
    if (!entry.has("acquisition")) {
        item.acquisition = offer->kind == OfferKind::rental
                               ? Acquisition::cloud_on_demand
                               : (offer->condition == UnitCondition::new_unit ? Acquisition::buy_new
                                                                              : Acquisition::buy_used);
    }
}

// units: counts units of the named offer; the GPU count follows from it and must agree with a
// given count.
void read_hardware_units(MapReader& entry, ProposedHardware& item, const LoadContext& context) {
    if (!entry.integer("units", item.units, 1, 1 << 20)) {
        return;
    }
    if (!entry.has("offer")) {
        entry.error("units", "units count units of an offer: name it with offer:");
    } else if (const Offer* offer = context.catalog != nullptr ? context.catalog->find_offer(item.offer) : nullptr) {
        const int gpus = item.units * offer->gpus_per_unit;
        if (entry.has("count") && item.count != gpus) {
            entry.error("count", fmt::format("count {} disagrees with {} unit{} of {} ({} GPUs); give one of them",
                                             item.count, item.units, item.units == 1 ? "" : "s", offer->id, gpus));
        }
        item.count = gpus;
    }
}

ProposedHardware read_proposed_hardware(MapReader& entry, const LoadContext& context) {
    ProposedHardware item;
    item.entry_position = entry.position();
    entry.require("role");
    if (!entry.has("offer")) {
        entry.require("gpu");
    }
    if (!entry.has("units")) {
        entry.require("count");
    }
    entry.choice("role", item.role, role_names);
    read_hardware_offer(entry, item, context);
    if (entry.text("gpu", item.gpu) && context.catalog != nullptr && context.catalog->find(item.gpu) == nullptr) {
        const std::string suggestion = context.catalog->suggest(item.gpu);
        entry.error("gpu", fmt::format("unknown GPU '{}'{}", item.gpu,
                                       suggestion.empty() ? "; `gpusel catalog list` shows the ids"
                                                          : ", did you mean '" + suggestion + "'?"));
    }
    entry.integer("count", item.count, 1, 1 << 20);
    entry.choice("acquisition", item.acquisition, acquisition_names);
    read_hardware_units(entry, item, context);
    if (entry.has("offer") && entry.has("gpu") && context.catalog != nullptr) {
        const Offer* offer = context.catalog->find_offer(item.offer);
        if (offer != nullptr && !equals_ignore_case(offer->gpu, item.gpu)) {
            entry.error("gpu", fmt::format("offer {} sells {}, not {}", offer->id, offer->gpu, item.gpu));
        }
    }
    double price = 0;
    if (entry.number("unit_price", price, UnitKind::usd, 0, 1e8, true)) {
        item.unit_price_usd = price;
    }
    item.gpu_position = entry.position_of("gpu");
    item.count_position = entry.position_of("count");
    item.acquisition_position = entry.position_of("acquisition");
    item.unit_price_position = entry.position_of("unit_price");
    item.offer_position = entry.position_of("offer");
    entry.finish();
    return item;
}

// workload: (a file) or workloads: (a list), not both; the project is named after the proposal
// when they do not name it.
void read_proposal_workloads(MapReader& top, Proposal& proposal, Diagnostics& diagnostics,
                             const LoadContext& context, const std::string& path) {
    const std::filesystem::path base = directory_of(path);
    std::string workload_file;
    if (top.text("workload", workload_file)) {
        const std::filesystem::path target = std::filesystem::path(workload_file).is_absolute()
                                                 ? std::filesystem::path(workload_file)
                                                 : (base / workload_file).lexically_normal();
        try {
            proposal.project = load_plan_input_file(target.string(), context);
        } catch (const InputError& error) {
            for (const Diagnostic& inner : error.diagnostics()) {
                top.error("workload", "in " + format_diagnostic(inner));
            }
        }
    }
    read_workload_list(top, "workloads", proposal.project, diagnostics, context, base, display_name(path));
    if (!top.has("workload") && !top.has("workloads")) {
        top.require("workload");
    } else if (top.has("workload") && top.has("workloads")) {
        top.error("workloads", "give workload (a file) or workloads (a list), not both");
    }
    if (proposal.project.name.empty()) {
        proposal.project.name = proposal.name;
    }
}

void read_proposal_policy(const YamlNode& policy, ProposalPolicy& result, Diagnostics& diagnostics) {
    MapReader reader(policy, "policy", diagnostics);
    reader.number("memory_headroom", result.memory_headroom_fraction, UnitKind::fraction, 0, 0.9);
    reader.number("max_overspend", result.max_overspend_fraction, UnitKind::fraction, 0, 100);
    reader.number("min_saving", result.min_saving_usd, UnitKind::usd, 0, 1e12);
    reader.boolean("require_slo", result.require_slo);
    reader.boolean("warn_oversize", result.warn_oversize);
    reader.finish();
}

}  // namespace

Proposal load_proposal_file(const std::string& path, const LoadContext& context) {
    Diagnostics diagnostics(display_name(path));
    const YamlNode root = read_yaml_file(path, &diagnostics);
    MapReader top(root, "", diagnostics);
    Proposal proposal;
    proposal.file = display_name(path);
    top.require("proposal");
    top.require("hardware");
    int format = 1;
    if (top.integer("format", format, 1, 1000) && format != 1) {
        top.error("format", fmt::format("format {} is not supported; this gpusel reads format 1", format));
    }
    top.text("proposal", proposal.name);
    read_proposal_workloads(top, proposal, diagnostics, context, path);
    if (const YamlNode* hardware = top.node("hardware")) {
        if (hardware->kind != YamlNode::Kind::sequence || hardware->items.empty()) {
            top.error("hardware", "expected a non-empty list of {role, gpu, count, acquisition}");
        } else {
            for (std::size_t i = 0; i < hardware->items.size(); ++i) {
                MapReader entry(hardware->items[i], fmt::format("hardware[{}]", i), diagnostics);
                proposal.hardware.push_back(read_proposed_hardware(entry, context));
            }
        }
    }
    if (const YamlNode* policy = top.node("policy")) {
        read_proposal_policy(*policy, proposal.policy, diagnostics);
    }
    top.finish();
    diagnostics.throw_if_any();
    return proposal;
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
