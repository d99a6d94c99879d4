// The training section of a workload file: optimizer, micro-batch and global batch, sequence
// length, checkpointing, sharding and parallelism, LoRA, the software's implementation choices
// that the framework defaults, the amount of data and the deadline; and the data section (the
// input pipeline). Every default applied is recorded as an Assumption (docs/workload.md).

#include <algorithm>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "inputs/workload_reader.hpp"

namespace gpusel {

using namespace inputs_detail;

namespace {

constexpr std::pair<Optimizer, std::string_view> optimizer_names[] = {{Optimizer::adamw, "adamw"},
                                                                      {Optimizer::adam, "adam"},
                                                                      {Optimizer::sgd, "sgd"},
                                                                      {Optimizer::sgd_momentum, "sgd-momentum"},
                                                                      {Optimizer::adamw_8bit, "adamw-8bit"},
                                                                      {Optimizer::adafactor, "adafactor"},
                                                                      {Optimizer::lion, "lion"}};
constexpr std::pair<Checkpointing, std::string_view> checkpointing_names[] = {
    {Checkpointing::none, "none"}, {Checkpointing::selective, "selective"}, {Checkpointing::full, "full"}};
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
constexpr std::pair<Decode, std::string_view> decode_names[] = {
    {Decode::none, "none"}, {Decode::cpu, "cpu"}, {Decode::gpu, "gpu"}};
constexpr std::pair<Storage, std::string_view> storage_names[] = {{Storage::hdd, "hdd"},
                                                                  {Storage::sata_ssd, "sata-ssd"},
                                                                  {Storage::nvme, "nvme"},
                                                                  {Storage::network, "network"},
                                                                  {Storage::ram, "ram"}};

}  // namespace

bool Workload::assumes_image_pipeline() const {
    if (!is_training() || data.given || !data.modelled ||
        (model.family != ModelFamily::cnn && model.family != ModelFamily::vit)) {
        return false;
    }
    // H×W×3: an RGB image. Volumes (H×W×D×1) and latents (H×W×4) are not JPEG samples.
    const std::string_view input = model.input;
    const std::size_t first = input.find('x');
    const std::size_t second = first == std::string_view::npos ? first : input.find('x', first + 1);
    return second != std::string_view::npos && input.substr(second + 1) == "3" && first > 0 && second > first + 1;
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

namespace inputs_detail {

// micro_batch: N, `auto` (powers of two to 64) or `A..B` (every integer from A to B).
void WorkloadReader::read_micro_batch(MapReader& reader, TrainingSpec& training) {
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
void WorkloadReader::read_checkpointing(MapReader& reader, TrainingSpec& training) {
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
                m_diagnostics.error(
                    item.position, reader.child_path("checkpointing"),
                    fmt::format("'{}' is not one of {}{}", text, fmt::join(names, ", "), did_you_mean(text, names)));
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

void WorkloadReader::read_training(const YamlNode& node, const std::string& path) {
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
    if (!reader.boolean("master_weights", training.master_weights) && !reader.has("master_weights") && low_precision) {
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
            reader.error("context_parallel", fmt::format("seq_len {} must be a multiple of 2 × context_parallel ({})",
                                                         training.seq_len, 2 * training.context_parallel));
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
    if (deadline && training.deadline_seconds > 0 && !reader.has("dataset_tokens") && !reader.has("dataset_samples")) {
        reader.error("deadline", "a deadline needs dataset_tokens or dataset_samples to judge the time to train");
    }
    reader.finish();
}

// The software's implementation choices; each default comes from runtime.framework
// (docs/memory-model.md, "Software behaviours", gives the source of each).
void WorkloadReader::read_implementation(MapReader& reader) {
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

void WorkloadReader::read_parallel(MapReader& reader, std::string_view key, int& into) {
    if (const YamlNode* node = reader.node(key);
        node != nullptr && node->kind == YamlNode::Kind::scalar && node->scalar == "auto") {
        into = 0;
        return;
    }
    reader.integer(key, into, 1, 4096);
}

void WorkloadReader::read_data(const YamlNode& node, const std::string& path) {
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
}  // namespace inputs_detail

}  // namespace gpusel
