// gpusel perf WORKLOAD --gpu ID [--count N] [--format table|json]: speed, latency under load
// and the binding resource of one workload on one candidate.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/context.hpp"
#include "cli/format_option.hpp"
#include "explain/explain.hpp"
#include "perf/calibration.hpp"
#include "perf/perf.hpp"
#include "plan/redundancy.hpp"
#include "report/perf_render.hpp"

namespace gpusel::cli {

namespace {

struct PerfOptions {
    std::string workload;
    std::string gpu;
    std::string count = "1";
    PerfFormat format = PerfFormat::table;
    std::string stack = "auto";
    std::string batch;
    std::string micro_batch;
    std::string precision;        // "" = the workload's
    std::string tensor_parallel;  // "" = the smallest split that holds the weights
    std::string calibration;      // --calibration FILE
};

// --tensor-parallel T over --count N GPUs: inference replicas of T GPUs (N / T of them); training
// keeps the workload's pipeline split and sharding and runs the rest data parallel.
Layout tensor_parallel_layout(const Workload& workload, const GpuSpec& gpu, int count, int tensor_parallel,
                              ServingStack stack) {
    Layout layout;
    if (workload.is_training()) {
        const FittingLayout fitting = fitting_layout(workload, gpu, count, stack);
        if (fitting.found()) {
            layout = fitting.layout;
        }
    }
    layout.tensor_parallel = tensor_parallel;
    const int split = tensor_parallel * std::max(1, layout.pipeline_parallel);
    if (count % split != 0) {
        throw UsageError(fmt::format("--count {} is not a multiple of --tensor-parallel {}{}", count, tensor_parallel,
                                     split == tensor_parallel
                                         ? std::string()
                                         : fmt::format(" × pipeline_parallel {}", layout.pipeline_parallel)));
    }
    layout.data_parallel = count / split;
    return layout;
}

// The model says why no layout exists; the words name this command's --count flag.
Layout layout_or_usage_error(const FittingLayout& fitting, int count) {
    switch (fitting.problem) {
        case LayoutProblem::none:
            break;
        case LayoutProblem::no_gpus:
            throw UsageError("--count must be at least 1");
        case LayoutProblem::count_not_multiple_of_split:
            throw UsageError(fmt::format("--count {} is not a multiple of tensor_parallel {} × pipeline_parallel {}",
                                         count, fitting.tensor_parallel, fitting.pipeline_parallel));
        case LayoutProblem::replica_does_not_divide:
            throw UsageError(
                fmt::format("--count {}: each replica needs {} GPUs to hold the weights; use a multiple of {}", count,
                            fitting.replica_gpus, fitting.replica_gpus));
    }
    return fitting.layout;
}

void run_perf(Context& context, const PerfOptions& options) {
    // A stack class, or an engine (and era) whose efficiency rules apply (docs/perf-model.md).
    std::optional<ServingStack> stack = parse_serving_stack(options.stack);
    std::string engine;
    if (!stack && is_known_engine(options.stack)) {
        stack = stack_of_engine(options.stack);
        engine = options.stack;
    }
    if (!stack) {
        throw UsageError(fmt::format("--stack: '{}' is not one of auto, optimized, llama.cpp, eager or an engine ({})",
                                     options.stack, fmt::join(known_engine_names(), ", ")));
    }
    const int count = parse_count_flag(options.count, "--count", 1, 1 << 20);
    const GpuSpec* gpu = context.catalog().find(options.gpu);
    if (gpu == nullptr) {
        const std::string suggestion = context.catalog().suggest(options.gpu);
        throw UsageError(fmt::format(
            "--gpu: unknown GPU '{}'{}", options.gpu,
            suggestion.empty() ? "; `gpusel catalog list` shows the ids" : ", did you mean '" + suggestion + "'?"));
    }
    PerfQuery query;
    query.stack = *stack;
    query.engine = engine;
    if (!options.batch.empty()) {
        query.batch = parse_count_flag(options.batch, "--batch", 1, 1 << 20);
    }
    if (!options.micro_batch.empty()) {
        query.micro_batch = parse_count_flag(options.micro_batch, "--micro-batch", 1, 1 << 20);
    }
    Workload workload = load_workload_file(options.workload, context.load_context());
    apply_calibration_option(context, options.calibration, workload);
    if (!options.batch.empty() && workload.is_training()) {
        throw UsageError("--batch applies to inference workloads; use --micro-batch for training");
    }
    if (!options.micro_batch.empty() && !workload.is_training()) {
        throw UsageError("--micro-batch applies to training workloads; use --batch for inference");
    }
    if (!options.precision.empty()) {
        query.precision = parse_precision(options.precision);
        if (!query.precision) {
            std::vector<std::string> names;
            for (const Precision precision : all_precisions) {
                names.emplace_back(to_string(precision));
            }
            throw UsageError(fmt::format("--precision: '{}' is not one of {}{}", options.precision,
                                         fmt::join(names, ", "), did_you_mean(options.precision, names)));
        }
    }
    const Layout ordered =
        options.tensor_parallel.empty()
            ? layout_or_usage_error(fitting_layout(workload, *gpu, count, query.stack), count)
            : tensor_parallel_layout(workload, *gpu, count,
                                     parse_count_flag(options.tensor_parallel, "--tensor-parallel", 1, 64),
                                     query.stack);
    // --count is the GPUs ordered, as a plan's procurement states them: deployment.redundancy's
    // spares are held out of serving by the planner's own rule, so a pick's count gives its figures.
    const ServingOfOrder serving = serving_of_order(workload, ordered);
    query.layout = serving.serving;
    const EfficiencyTable uncalibrated = builtin_efficiency();
    // The measurement ran on the stack the prediction is asked for.
    SpeedCalibration calibration =
        calibrate_speed(workload, context.catalog(), uncalibrated, CalibrationStack{query.stack, query.engine});
    const EfficiencyTable efficiency = calibrated_efficiency(uncalibrated, calibration);
    PerfEstimate estimate = estimate_perf(workload, *gpu, query, efficiency);
    fill_bottleneck_explanation(workload, *gpu, estimate);
    const int needed_replicas = estimate.inference ? estimate.inference->replicas_needed : 0;
    const int needed_spares =
        needed_replicas > 0 ? spare_replicas_for_serving(workload.deployment, needed_replicas) : 0;
    const std::string group(speed_band_group(workload));
    const auto band = efficiency.speed_bands.find(group);
    // Where the calibration measured this GPU at this size, the band is the measurement's noise.
    const std::optional<SpeedBandFactors> measured =
        measured_speed_band(calibration, gpu->id, configuration_gpus(workload, query.layout));
    const PerfResult result{workload,
                            gpu->id,
                            count,
                            std::move(estimate),
                            std::move(calibration),
                            group,
                            measured                               ? *measured
                            : band != efficiency.speed_bands.end() ? band->second
                                                                   : SpeedBandFactors{},
                            measured.has_value(),
                            serving.spare_replicas,
                            needed_spares};
    if (options.format == PerfFormat::json) {
        render_perf_json(result, context.out);
    } else {
        render_perf_table(result, context.out, PerfStyle{context.quiet});
    }
}

}  // namespace

void register_perf(CLI::App& app, Context& context) {
    auto options = std::make_shared<PerfOptions>();
    CLI::App* command = app.add_subcommand(
        "perf", "Predict speed, latency under load and the bottleneck of a workload on one GPU type");
    command->add_option("workload", options->workload, "Workload file ('-' reads standard input)")
        ->required()
        ->type_name("WORKLOAD");
    command->add_option("--gpu", options->gpu, "Catalog id of the GPU (`gpusel catalog list`)")
        ->required()
        ->type_name("ID");
    command
        ->add_option("--count", options->count,
                     "Number of GPUs ordered (default 1); serving keeps deployment.redundancy's spare replicas among "
                     "them idle, as `gpusel plan` does")
        ->type_name("N");
    add_format_option(command, options->format,
                      FormatNames<PerfFormat>{{"table", PerfFormat::table}, {"json", PerfFormat::json}},
                      "Output format: table (default) or json");
    command
        ->add_option(
            "--stack", options->stack,
            "Software stack: auto (default: llama.cpp for GGUF weights, PyTorch eager for runtime.engine "
            "hf-generate, else an optimised engine: TensorRT-LLM/vLLM-class for LLMs, TensorRT/ONNX "
            "Runtime/torch.compile-class otherwise), optimized, llama.cpp, eager; or an engine whose efficiency "
            "rules apply: tensorrt-llm, vllm, sglang, lmdeploy, tensorrt, torch-compile, vllm-rocm, "
            "synapseai, llama.cpp, hf-generate")
        ->type_name("STACK");
    command->add_option("--batch", options->batch, "Inference: concurrent sequences per replica (overrides the file)")
        ->type_name("N");
    command
        ->add_option("--micro-batch", options->micro_batch, "Training: samples per GPU per pass (overrides the file)")
        ->type_name("N");
    command
        ->add_option("--precision", options->precision,
                     "Compute precision to estimate at: fp32, tf32, fp16, bf16, fp8, int8, int4, fp4 (default: the "
                     "file's)")
        ->type_name("P");
    command
        ->add_option("--tensor-parallel", options->tensor_parallel,
                     "GPUs per model split: inference replicas of T GPUs, training tensor parallel T (default: the "
                     "smallest split that holds the weights)")
        ->type_name("T");
    add_calibration_option(command, options->calibration);
    command->footer(
        "\nExamples:\n"
        "  gpusel perf examples/chat-llama2-13b-int4.yaml --gpu L40\n"
        "      TTFT, TPOT, throughput and P99 at the offered load, with the bottleneck\n"
        "  gpusel perf examples/chat-llama2-13b-int4.yaml --gpu RTX-PRO-6000 --count 6\n"
        "      a plan's pick exactly: the 6 GPUs it orders, 1 a spare (deployment.redundancy n+1);\n"
        "      add its --tensor-parallel, --precision and --batch where it states them\n"
        "  gpusel perf examples/chat-llama2-13b-int4.yaml --gpu T4 --count 34 --tensor-parallel 2\n"
        "      17 replicas of 2 GPUs, one of them the spare\n"
        "  gpusel perf examples/chat-llama2-13b-int4.yaml --gpu H100-SXM5 --format json\n"
        "  gpusel perf train.yaml --gpu A100-80GB-SXM4 --count 16\n"
        "      step time, tokens/s, MFU and time to train over 16 GPUs (2 nodes of 8)\n"
        "  gpusel perf chat.yaml --gpu H100-SXM5 --calibration measured.yaml\n"
        "      corrected by what `gpusel calibrate` read from a benchmark on another GPU\n"
        "\nThe model and its efficiency factors (with sources) are in docs/perf-model.md and\n"
        "data/efficiency.yaml. Throughputs are for all serving GPUs together; times are wall-clock.\n"
        "A serving workload's deployment.redundancy (default n+1) holds spare replicas of --count out\n"
        "of serving, as the plan's pick does: the output says how many.\n");
    command->callback([&context, options] { run_perf(context, *options); });
}

}  // namespace gpusel::cli
