// gpusel memory WORKLOAD [--gpu ID] [--count N] [--format table|json]

#include <algorithm>

#include <fmt/format.h>

#include "base/error.hpp"
#include "cli/context.hpp"
#include "cli/format_option.hpp"
#include "memory/memory.hpp"
#include "report/memory_render.hpp"

namespace gpusel::cli {

namespace {

struct MemoryOptions {
    std::string workload_file;
    std::string gpu;
    std::string count_text = "1";
    std::string calibration;  // --calibration FILE
    MemoryFormat format = MemoryFormat::table;
};

void run_memory(Context& context, const MemoryOptions& options) {
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
    Workload workload = load_workload_file(options.workload_file, context.load_context());
    apply_calibration_option(context, options.calibration, workload);
    const std::optional<Layout> layout = layout_as_written(workload, count);
    if (!layout) {
        throw UsageError(fmt::format(
            "--count: {} GPUs cannot hold the workload's fixed tensor_parallel {} × "
            "pipeline_parallel {}; use a multiple of {}",
            count, workload.training.tensor_parallel, workload.training.pipeline_parallel,
            std::max(workload.training.tensor_parallel, 1) * std::max(workload.training.pipeline_parallel, 1)));
    }
    MemoryResult result{workload, count, {}};
    for (const GpuSpec* gpu : gpus) {
        MemoryQuery query;
        query.layout = *layout;
        result.candidates.push_back(MemoryCandidate{gpu->id, *layout, estimate_memory(workload, *gpu, query)});
    }
    const MemoryStyle style{context.quiet};
    if (options.format == MemoryFormat::json) {
        render_memory_json(result, context.out);
    } else if (!options.gpu.empty()) {
        render_memory_breakdown(result, context.out, style);
    } else {
        render_memory_overview(result, context.out, style);
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
    add_format_option(command, options->format,
                      FormatNames<MemoryFormat>{{"table", MemoryFormat::table}, {"json", MemoryFormat::json}},
                      "table (default) or json");
    add_calibration_option(command, options->calibration);
    command->footer(
        "\nExamples:\n"
        "  gpusel memory examples/llama-finetune.yaml                       every catalog GPU: fits? headroom?\n"
        "  gpusel memory examples/llama-finetune.yaml --gpu A100-40GB-SXM4  the breakdown, with its assumptions\n"
        "  gpusel memory train.yaml --gpu H100-SXM5 --count 8               per-GPU memory on 8 GPUs\n"
        "  gpusel memory train.yaml --format json                           machine-readable (format_version 1)\n"
        "  gpusel memory train.yaml --calibration measured.yaml             fitted to measured peaks\n"
        "\nallocated = tensors (torch.cuda.max_memory_allocated); total = what nvidia-smi shows (adds the CUDA\n"
        "context and the caching allocator's reserve). Terms and sources: docs/memory-model.md.\n");
    command->callback([&context, options] { run_memory(context, *options); });
}

}  // namespace gpusel::cli
