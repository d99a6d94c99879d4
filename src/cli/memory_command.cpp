// gpusel memory WORKLOAD [--gpu ID] [--count N] [--format table|json]

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/format.hpp"
#include "cli/context.hpp"
#include "io/json_output.hpp"
#include "memory/memory.hpp"
#include "report/text_table.hpp"

namespace gpusel::cli {

namespace {

struct MemoryOptions {
    std::string workload_file;
    std::string gpu;
    std::string count_text = "1";
    std::string format = "table";
};

struct GpuEstimate {
    const GpuSpec* gpu = nullptr;
    Layout layout;
    MemoryEstimate estimate;
};

std::string gb2(double bytes) {
    return fmt::format("{:.2f}", bytes / 1e9);
}

long long whole_bytes(double bytes) {
    return std::isfinite(bytes) ? std::llround(bytes) : 0;
}

// A bar of `width` cells for `fraction` of the whole, in eighths of a cell.
std::string bar(double fraction, int width) {
    static const char* const partial[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    const int eighths = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * width * 8));
    std::string text;
    for (int i = 0; i < eighths / 8; ++i) {
        text += "█";
    }
    text += partial[eighths % 8];
    return text;
}

nlohmann::ordered_json estimate_json(const GpuEstimate& item, int count, const Workload& workload) {
    const bool training = workload.is_training();
    const MemoryEstimate& estimate = item.estimate;
    const MemoryBreakdown& per_gpu = estimate.per_gpu;
    nlohmann::ordered_json json;
    json["gpu"] = item.gpu->id;
    json["count"] = count;
    json["layout"] = {{"tensor_parallel", item.layout.tensor_parallel},
                      {"pipeline_parallel", item.layout.pipeline_parallel},
                      {"data_parallel", item.layout.data_parallel},
                      {"sharding", std::string(to_string(item.layout.sharding))}};
    json["per_gpu"] = {{"weights_bytes", whole_bytes(per_gpu.weights_bytes)},
                       {"gradients_bytes", whole_bytes(per_gpu.gradients_bytes)},
                       {"optimizer_bytes", whole_bytes(per_gpu.optimizer_bytes)},
                       {"activations_bytes", whole_bytes(per_gpu.activations_bytes)},
                       {"kv_cache_bytes", whole_bytes(per_gpu.kv_cache_bytes)},
                       {"overhead_bytes", whole_bytes(per_gpu.overhead_bytes)},
                       {"allocated_bytes", whole_bytes(per_gpu.allocated_bytes)},
                       {"total_bytes", whole_bytes(per_gpu.total_bytes)},
                       {"total_low_bytes", whole_bytes(per_gpu.total_low_bytes)},
                       {"total_high_bytes", whole_bytes(per_gpu.total_high_bytes)}};
    json["capacity_bytes"] = whole_bytes(estimate.capacity_bytes);
    json["fits"] = estimate.fits;
    json["headroom_bytes"] = whole_bytes(estimate.headroom_bytes);
    if (training) {
        json["max_micro_batch"] = estimate.max_micro_batch;
        json["max_batch"] = nullptr;
        json["max_context_tokens"] = nullptr;
    } else {
        json["max_micro_batch"] = nullptr;
        json["max_batch"] = estimate.max_batch;
        if (workload.model.is_transformer()) {
            json["max_context_tokens"] = estimate.max_context_tokens;
        } else {
            json["max_context_tokens"] = nullptr;  // tokens do not apply to this model
        }
    }
    if (estimate.serving) {
        // Contract (issue 16): bytes per GPU; tokens and concurrency per replica.
        const ServingMemory& serving = *estimate.serving;
        json["serving"] = {{"engine", std::string(to_string(serving.engine))},
                           {"weights_bytes", whole_bytes(serving.weights_bytes)},
                           {"activation_peak_bytes", whole_bytes(serving.activation_peak_bytes)},
                           {"non_torch_bytes", whole_bytes(serving.non_torch_bytes)},
                           {"kv_cache_bytes", whole_bytes(serving.kv_cache_bytes)},
                           {"kv_cache_tokens", serving.kv_cache_tokens},
                           {"max_model_len", serving.max_model_len},
                           {"max_concurrency", std::round(serving.max_concurrency * 100) / 100}};
    }
    json["notes"] = estimate.notes;
    return json;
}

void print_json(Context& context, const Workload& workload, const std::vector<GpuEstimate>& estimates, int count) {
    nlohmann::ordered_json document;
    document["format_version"] = 1;
    document["workload"] = workload.name;
    document["estimates"] = nlohmann::ordered_json::array();
    for (const GpuEstimate& item : estimates) {
        document["estimates"].push_back(estimate_json(item, count, workload));
    }
    context.out << dump_json(document);
}

std::string what_is_estimated(const Workload& workload, const MemoryEstimate& estimate) {
    if (workload.is_training()) {
        return workload.model.is_transformer()
                   ? fmt::format("micro-batch {} × seq {}", estimate.micro_batch, workload.training.seq_len)
                   : fmt::format("micro-batch {}", estimate.micro_batch);
    }
    return workload.model.is_transformer()
               ? fmt::format("batch {} × {} tokens", estimate.batch, estimate.context_tokens)
               : fmt::format("batch {}", estimate.batch);
}

void print_overview(Context& context, const Workload& workload, const std::vector<GpuEstimate>& estimates, int count) {
    std::ostream& out = context.out;
    const MemoryEstimate& first = estimates.front().estimate;
    out << fmt::format("{} · {} · {} · {} GPU{} per candidate ({}) · GB = 1e9 bytes\n\n", workload.name,
                       to_string(workload.kind), what_is_estimated(workload, first), count, count == 1 ? "" : "s",
                       describe(estimates.front().layout));
    TextTable table;
    table.add_column("gpu");
    table.add_column("memory", TextTable::Align::right);
    table.add_column("estimate", TextTable::Align::right);
    table.add_column("band", TextTable::Align::right);
    table.add_column("fits");
    table.add_column("headroom", TextTable::Align::right);
    table.add_column(workload.is_training() ? "max micro-batch" : "max batch", TextTable::Align::right);
    for (const GpuEstimate& item : estimates) {
        const MemoryEstimate& estimate = item.estimate;
        const int max_value = workload.is_training() ? estimate.max_micro_batch : estimate.max_batch;
        table.add_row(
            {item.gpu->id, fmt::format("{} GB", gb2(estimate.capacity_bytes)),
             fmt::format("{} GB", gb2(estimate.per_gpu.total_bytes)),
             fmt::format("{}–{}", gb2(estimate.per_gpu.total_low_bytes), gb2(estimate.per_gpu.total_high_bytes)),
             estimate.fits ? "yes" : "no",
             fmt::format("{} GB ({})", gb2(estimate.headroom_bytes),
                         format_percent(estimate.headroom_bytes / estimate.capacity_bytes)),
             max_value > 0 ? std::to_string(max_value) : "none"});
    }
    out << table.render();
    if (!context.quiet) {
        out << fmt::format(
            "\nestimate = per-GPU device memory at peak (what nvidia-smi shows); fits = estimate ≤ "
            "capacity less {} headroom.\n`gpusel memory {} --gpu ID` shows the breakdown and its "
            "assumptions.\n",
            format_percent(first.headroom_fraction),
            workload.file.empty() || workload.file == "<stdin>" ? std::string("-") : workload.file);
    }
}

void print_breakdown(Context& context, const Workload& workload, const GpuEstimate& item, int count) {
    std::ostream& out = context.out;
    const MemoryEstimate& estimate = item.estimate;
    const MemoryBreakdown& per_gpu = estimate.per_gpu;
    out << fmt::format("{} on {} × {} ({}) · {} · per GPU, GB = 1e9 bytes\n\n", workload.name, item.gpu->id, count,
                       describe(item.layout), what_is_estimated(workload, estimate));
    const double total = per_gpu.total_bytes > 0 ? per_gpu.total_bytes : 1;
    TextTable table;
    table.add_column("component");
    table.add_column("GB", TextTable::Align::right);
    table.add_column("share", TextTable::Align::right);
    table.add_column("");
    const auto row = [&](const char* name, double bytes) {
        table.add_row({name, gb2(bytes), format_percent(bytes / total), bar(bytes / total, 24)});
    };
    row("weights", per_gpu.weights_bytes);
    if (workload.is_training()) {
        row("gradients", per_gpu.gradients_bytes);
        row("optimizer", per_gpu.optimizer_bytes);
    }
    row("activations", per_gpu.activations_bytes);
    if (!workload.is_training()) {
        row("kv cache", per_gpu.kv_cache_bytes);
    }
    row("overhead", per_gpu.overhead_bytes);
    table.add_row({"allocated", gb2(per_gpu.allocated_bytes), "", "tensors: torch.cuda.max_memory_allocated()"});
    table.add_row(
        {"total", gb2(per_gpu.total_bytes), "",
         fmt::format("device: nvidia-smi; band {}–{}", gb2(per_gpu.total_low_bytes), gb2(per_gpu.total_high_bytes))});
    table.add_row({"capacity", gb2(estimate.capacity_bytes), "",
                   fmt::format("{} with {} headroom; {} GB free", estimate.fits ? "fits" : "does not fit",
                               format_percent(estimate.headroom_fraction), gb2(estimate.headroom_bytes))});
    out << table.render();
    out << "\n";
    if (workload.is_training()) {
        out << fmt::format("largest micro-batch that fits: {}\n",
                           estimate.max_micro_batch > 0 ? std::to_string(estimate.max_micro_batch) : "none");
    } else {
        const std::string max_batch = estimate.max_batch > 0 ? std::to_string(estimate.max_batch) : "none";
        if (workload.model.is_transformer()) {
            out << fmt::format(
                "largest batch that fits at {} tokens: {} · largest context at batch {}: {}\n", estimate.context_tokens,
                max_batch, estimate.batch,
                estimate.max_context_tokens > 0 ? fmt::format("{} tokens", estimate.max_context_tokens) : "none");
        } else {
            out << fmt::format("largest batch that fits: {}\n", max_batch);
        }
    }
    if (estimate.serving) {
        const ServingMemory& serving = *estimate.serving;
        out << fmt::format(
            "{}: budget {} GB ({:g} × {} GB) · KV cache {} GB = {} tokens · max concurrency at "
            "max_model_len {}: {:.2f}x{}\n",
            to_string(serving.engine), gb2(serving.budget_bytes), serving.memory_fraction,
            gb2(serving.device_total_bytes), gb2(serving.kv_cache_bytes), serving.kv_cache_tokens,
            serving.max_model_len, serving.max_concurrency,
            serving.fits ? "" : fmt::format("\nthe engine would not start: {}", serving.refusal));
    }
    if (!context.quiet) {
        out << "\nassumptions:\n";
        for (const std::string& note : estimate.notes) {
            out << "  - " << note << "\n";
        }
    }
}

void run_memory(Context& context, const MemoryOptions& options) {
    if (options.format != "table" && options.format != "json") {
        throw UsageError(fmt::format("--format: '{}' is not one of table, json", options.format));
    }
    const int count = parse_count_flag(options.count_text, "--count", 1, 1 << 20);
    const Catalog& catalog = context.catalog();
    std::vector<const GpuSpec*> gpus;
    if (!options.gpu.empty()) {
        const GpuSpec* gpu = catalog.find(options.gpu);
        if (gpu == nullptr) {
            const std::string suggestion = catalog.suggest(options.gpu);
            throw UsageError(fmt::format(
                "--gpu: unknown GPU '{}'{}", options.gpu,
                suggestion.empty() ? "; `gpusel catalog list` shows the ids" : ", did you mean '" + suggestion + "'?"));
        }
        gpus.push_back(gpu);
    } else {
        for (const GpuSpec& gpu : catalog.gpus()) {
            gpus.push_back(&gpu);
        }
    }
    if (gpus.empty()) {
        throw UsageError("the catalog holds no GPUs");
    }
    const Workload workload = load_workload_file(options.workload_file, context.load_context());
    const std::optional<Layout> layout = layout_as_written(workload, count);
    if (!layout) {
        throw UsageError(fmt::format(
            "--count: {} GPUs cannot hold the workload's fixed tensor_parallel {} × "
            "pipeline_parallel {}; use a multiple of {}",
            count, workload.training.tensor_parallel, workload.training.pipeline_parallel,
            std::max(workload.training.tensor_parallel, 1) * std::max(workload.training.pipeline_parallel, 1)));
    }
    std::vector<GpuEstimate> estimates;
    for (const GpuSpec* gpu : gpus) {
        MemoryQuery query;
        query.layout = *layout;
        estimates.push_back(GpuEstimate{gpu, *layout, estimate_memory(workload, *gpu, query)});
    }
    if (options.format == "json") {
        print_json(context, workload, estimates, count);
    } else if (!options.gpu.empty()) {
        print_breakdown(context, workload, estimates.front(), count);
    } else {
        print_overview(context, workload, estimates, count);
    }
}

}  // namespace

void register_memory(CLI::App& app, Context& context) {
    auto options = std::make_shared<MemoryOptions>();
    CLI::App* command = app.add_subcommand(
        "memory", "Per-GPU memory at peak, by component: fits? how much room? largest batch that fits");
    command->add_option("workload", options->workload_file, "Workload file ('-' reads standard input)")
        ->required()
        ->type_name("WORKLOAD");
    command->add_option("--gpu", options->gpu, "Catalog id: show the full breakdown for this GPU")->type_name("ID");
    command
        ->add_option("--count", options->count_text,
                     "GPUs per candidate (default 1): training spreads them data parallel with the workload's "
                     "sharding; inference splits the model over them (tensor parallel)")
        ->type_name("N");
    command->add_option("--format", options->format, "table (default) or json")->type_name("FORMAT");
    command->footer(
        "\nExamples:\n"
        "  gpusel memory examples/llama-finetune.yaml                       every catalog GPU: fits? headroom?\n"
        "  gpusel memory examples/llama-finetune.yaml --gpu A100-40GB-SXM4  the breakdown, with its assumptions\n"
        "  gpusel memory train.yaml --gpu H100-SXM5 --count 8               per-GPU memory on 8 GPUs\n"
        "  gpusel memory train.yaml --format json                           machine-readable (format_version 1)\n"
        "\nallocated = tensors (torch.cuda.max_memory_allocated); total = what nvidia-smi shows (adds the CUDA\n"
        "context and the caching allocator's reserve). Terms and sources: docs/memory-model.md.\n");
    command->callback([&context, options] { run_memory(context, *options); });
}

}  // namespace gpusel::cli
