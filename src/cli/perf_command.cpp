// gpusel perf WORKLOAD --gpu ID [--count N] [--format table|json]: speed, latency under load
// and the binding resource of one workload on one candidate.

#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/format.hpp"
#include "cli/context.hpp"
#include "io/json_output.hpp"
#include "perf/perf.hpp"

namespace gpusel::cli {

namespace {

using Json = nlohmann::ordered_json;

struct PerfOptions {
    std::string workload;
    std::string gpu;
    std::string count = "1";
    std::string format = "table";
    std::string stack = "auto";
    std::string batch;
    std::string micro_batch;
};

// Six significant digits: stable across platforms, finer than any estimate deserves.
double rounded(double value) { return round_significant(value, 6); }

// A number, or null with a note naming the field when it is not finite.
Json number(double value, std::string_view field, std::vector<std::string>& notes) {
    if (std::isfinite(value)) {
        return rounded(value);
    }
    notes.push_back(fmt::format("{} cannot be computed", field));
    return nullptr;
}

Json optional_number(const std::optional<double>& value) {
    return value && std::isfinite(*value) ? Json(rounded(*value)) : Json(nullptr);
}

std::string layout_text(const Layout& layout) {
    return fmt::format("tp{} pp{} dp{}{}", layout.tensor_parallel, layout.pipeline_parallel, layout.data_parallel,
                       layout.sharding == Sharding::none ? "" : std::string(" ") + std::string(to_string(layout.sharding)));
}

std::string stack_label(ServingStack stack, const Workload& workload) {
    switch (stack) {
    case ServingStack::llama_cpp:
        return "llama.cpp";
    case ServingStack::eager:
        return "PyTorch eager";
    default:
        if (workload.is_training()) {
            return workload.model.is_transformer() ? "Megatron/FSDP-class" : "PyTorch DDP";
        }
        return workload.model.is_transformer() ? "TensorRT-LLM/vLLM-class" : "TensorRT-class";
    }
}

Json render_json(const Workload& workload, const GpuSpec& gpu, int count, const PerfEstimate& estimate) {
    std::vector<std::string> notes = estimate.notes;
    Json entry;
    entry["gpu"] = gpu.id;
    entry["count"] = count;
    entry["layout"] = Json{{"tensor_parallel", estimate.layout.tensor_parallel},
                           {"pipeline_parallel", estimate.layout.pipeline_parallel},
                           {"data_parallel", estimate.layout.data_parallel},
                           {"sharding", std::string(to_string(estimate.layout.sharding))}};
    entry["stack"] = std::string(to_string(estimate.stack));
    if (estimate.training) {
        const TrainingPerf& training = *estimate.training;
        Json object;
        object["step_time_s"] = number(training.step_time_s, "training.step_time_s", notes);
        if (workload.model.is_transformer()) {
            object["tokens_per_s"] = number(training.tokens_per_s, "training.tokens_per_s", notes);
        } else {
            object["tokens_per_s"] = nullptr;
            notes.push_back("training.tokens_per_s is null: the model has no tokens; see samples_per_s");
        }
        object["samples_per_s"] = number(training.samples_per_s, "training.samples_per_s", notes);
        object["mfu"] = number(training.mfu, "training.mfu", notes);
        object["time_to_train_s"] = optional_number(training.time_to_train_s);
        object["meets_deadline"] = training.meets_deadline;
        object["scaling_efficiency"] = number(training.scaling_efficiency, "training.scaling_efficiency", notes);
        object["micro_batch"] = training.micro_batch;
        object["gradient_accumulation"] = training.gradient_accumulation;
        object["global_batch"] = training.global_batch;
        entry["training"] = object;
    } else {
        entry["training"] = nullptr;
    }
    if (estimate.inference) {
        const InferencePerf& inference = *estimate.inference;
        const bool transformer = workload.model.is_transformer();
        Json object;
        object["ttft_s"] = number(inference.ttft_s, "inference.ttft_s", notes);
        if (transformer) {
            object["tpot_s"] = number(inference.tpot_s, "inference.tpot_s", notes);
            object["output_tokens_per_s"] = number(inference.output_tokens_per_s, "inference.output_tokens_per_s", notes);
            object["prefill_tokens_per_s"] = number(inference.prefill_tokens_per_s, "inference.prefill_tokens_per_s", notes);
        } else {
            object["tpot_s"] = nullptr;
            object["output_tokens_per_s"] = nullptr;
            object["prefill_tokens_per_s"] = nullptr;
            notes.push_back("tpot_s, output_tokens_per_s and prefill_tokens_per_s are null: the model generates no "
                            "tokens; ttft_s is the latency of one request, requests_per_s the samples/s");
        }
        object["requests_per_s"] = number(inference.requests_per_s, "inference.requests_per_s", notes);
        object["p99_ttft_s"] = optional_number(inference.p99_ttft_s);
        object["p99_tpot_s"] = optional_number(inference.p99_tpot_s);
        object["p99_e2e_s"] = optional_number(inference.p99_e2e_s);
        object["batch"] = inference.batch;
        object["percentile"] = number(inference.percentile, "inference.percentile", notes);
        object["replicas"] = inference.replicas;
        object["max_batch_memory"] = inference.max_batch_memory;
        object["offered_requests_per_s"] =
            number(inference.offered_requests_per_s, "inference.offered_requests_per_s", notes);
        object["meets_slo"] = inference.meets_slo;
        object["max_requests_per_s_meeting_slo"] =
            number(inference.max_requests_per_s_meeting_slo, "inference.max_requests_per_s_meeting_slo", notes);
        object["binding_target"] = inference.binding_target;
        if (inference.replicas_needed > 0) {
            object["gpus_needed_for_slo"] =
                inference.replicas_needed * estimate.layout.tensor_parallel * estimate.layout.pipeline_parallel;
        } else {
            object["gpus_needed_for_slo"] = nullptr;
        }
        entry["inference"] = object;
    } else {
        entry["inference"] = nullptr;
    }
    entry["bottleneck"] = Json{{"resource", std::string(to_string(estimate.bottleneck.resource))},
                               {"phase", estimate.bottleneck.phase},
                               {"share", number(estimate.bottleneck.share, "bottleneck.share", notes)},
                               {"gpu_utilization",
                                number(estimate.bottleneck.gpu_utilization, "bottleneck.gpu_utilization", notes)},
                               {"detail", estimate.bottleneck.detail},
                               {"remedy", estimate.bottleneck.remedy}};
    entry["notes"] = notes;
    Json document;
    document["format_version"] = 1;
    document["workload"] = workload.name;
    document["estimates"] = Json::array({entry});
    return document;
}

std::string optional_duration(const std::optional<double>& value) {
    return value ? format_duration(*value) : std::string("—");
}

void render_table(const Workload& workload, const GpuSpec& gpu, int count, const PerfEstimate& estimate, bool quiet,
                  std::ostream& out) {
    out << fmt::format("{} on {} × {} ({}), {}\n", workload.name, count, gpu.id, layout_text(estimate.layout),
                       stack_label(estimate.stack, workload));
    if (estimate.training) {
        const TrainingPerf& training = *estimate.training;
        out << fmt::format("  step        {} per optimizer step: micro-batch {} × {} accumulation × {} data parallel = "
                           "{} samples\n",
                           format_duration(training.step_time_s), training.micro_batch, training.gradient_accumulation,
                           estimate.layout.data_parallel, training.global_batch);
        if (workload.model.is_transformer()) {
            out << fmt::format("  throughput  {}, {}, MFU {}\n", format_rate(training.tokens_per_s, "tokens/s"),
                               format_rate(training.samples_per_s, "samples/s"), format_percent(training.mfu));
        } else {
            out << fmt::format("  throughput  {}, MFU {}\n", format_rate(training.samples_per_s, "samples/s"),
                               format_percent(training.mfu));
        }
        if (estimate.layout.gpu_count() > 1) {
            out << fmt::format("  scaling     {} of ideal over {} GPUs (communication and pipeline bubble)\n",
                               format_percent(training.scaling_efficiency), estimate.layout.gpu_count());
        }
        if (training.time_to_train_s) {
            const double deadline = workload.training.deadline_seconds;
            out << fmt::format("  time        {} to train{}\n", format_duration(*training.time_to_train_s),
                               deadline > 0 ? fmt::format(" — deadline {} {}", format_duration(deadline),
                                                          training.meets_deadline ? "met" : "MISSED")
                                            : "");
        }
    }
    if (estimate.inference) {
        const InferencePerf& inference = *estimate.inference;
        const InferenceSpec& spec = workload.inference;
        const bool transformer = workload.model.is_transformer();
        out << fmt::format("  batch       {} per replica × {} replica(s) (memory holds {}){}\n", inference.batch,
                           inference.replicas, inference.max_batch_memory,
                           transformer ? fmt::format(", {} in / {} out tokens", spec.input_tokens, spec.output_tokens)
                                       : "");
        if (transformer) {
            out << fmt::format("  latency     TTFT {}, TPOT {} (one request alone)\n", format_duration(inference.ttft_s),
                               format_duration(inference.tpot_s));
            out << fmt::format("  throughput  {} out, {}, prefill {} (full batches)\n",
                               format_rate(inference.output_tokens_per_s, "tok/s"),
                               format_rate(inference.requests_per_s, "req/s"),
                               format_rate(inference.prefill_tokens_per_s, "tok/s"));
        } else {
            out << fmt::format("  latency     {} per request alone\n", format_duration(inference.ttft_s));
            out << fmt::format("  throughput  {} (full batches)\n", format_rate(inference.requests_per_s, "samples/s"));
        }
        const std::string percentile = fmt::format("P{:g}", inference.percentile);
        const std::string load = "at " + format_rate(spec.requests_per_s, "req/s");
        if (inference.p99_e2e_s) {
            out << fmt::format("  {:<11} {}{}end-to-end {} ({})\n", percentile,
                               transformer ? "TTFT " + optional_duration(inference.p99_ttft_s) + ", " : "",
                               transformer ? "TPOT " + optional_duration(inference.p99_tpot_s) + ", " : "",
                               optional_duration(inference.p99_e2e_s), load);
        } else {
            out << fmt::format("  {:<11} none: {} exceeds what {} replica(s) sustain, queues grow without bound\n",
                               percentile, load, inference.replicas);
        }
        const SloSpec& slo = spec.slo;
        std::vector<std::string> targets;
        if (slo.ttft_seconds > 0) {
            targets.push_back("TTFT ≤ " + format_duration(slo.ttft_seconds));
        }
        if (slo.tpot_seconds > 0 && transformer) {
            targets.push_back("TPOT ≤ " + format_duration(slo.tpot_seconds));
        }
        if (slo.e2e_seconds > 0) {
            targets.push_back("end-to-end ≤ " + format_duration(slo.e2e_seconds));
        }
        if (!targets.empty()) {
            out << fmt::format("  SLO         {} {}: {}; largest load meeting it {}\n", percentile,
                               fmt::join(targets, ", "), inference.meets_slo ? "met" : "MISSED",
                               format_rate(inference.max_requests_per_s_meeting_slo, "req/s"));
            if (inference.replicas_needed > 0) {
                const int per_replica = estimate.layout.tensor_parallel * estimate.layout.pipeline_parallel;
                out << fmt::format("              {} needs {} × {} ({} replica(s))\n", load,
                                   inference.replicas_needed * per_replica, gpu.id, inference.replicas_needed);
            }
        }
    }
    const Bottleneck& bottleneck = estimate.bottleneck;
    if (!estimate.training && !estimate.inference) {
        out << "  no estimate  " << bottleneck.detail << ": " << bottleneck.remedy << "\n";
    } else if (bottleneck.resource == Resource::memory_capacity) {
        out << fmt::format("  bottleneck  {} (GPU utilisation {})\n", to_string(bottleneck.resource),
                           format_percent(bottleneck.gpu_utilization));
    } else {
        out << fmt::format("  bottleneck  {} ({} of the {} time; GPU utilisation {})\n", to_string(bottleneck.resource),
                           format_percent(bottleneck.share), bottleneck.phase, format_percent(bottleneck.gpu_utilization));
    }
    if (estimate.training || estimate.inference) {
        out << "              " << bottleneck.detail << "\n";
        out << "  remedy      " << bottleneck.remedy << "\n";
    }
    if (!quiet && !estimate.notes.empty()) {
        out << "  notes\n";
        for (const std::string& note : estimate.notes) {
            out << "    - " << note << "\n";
        }
    }
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
        throw UsageError(fmt::format("--count {}: each replica needs {} GPUs to hold the weights; use a multiple of {}",
                                     count, fitting.replica_gpus, fitting.replica_gpus));
    }
    return fitting.layout;
}

void run_perf(Context& context, const PerfOptions& options) {
    if (options.format != "table" && options.format != "json") {
        throw UsageError(fmt::format("--format: '{}' is not one of table, json", options.format));
    }
    const std::optional<ServingStack> stack = parse_serving_stack(options.stack);
    if (!stack) {
        throw UsageError(fmt::format("--stack: '{}' is not one of auto, optimized, llama.cpp, eager", options.stack));
    }
    const int count = parse_count_flag(options.count, "--count", 1, 1 << 20);
    const GpuSpec* gpu = context.catalog().find(options.gpu);
    if (gpu == nullptr) {
        const std::string suggestion = context.catalog().suggest(options.gpu);
        throw UsageError(fmt::format("--gpu: unknown GPU '{}'{}", options.gpu,
                                     suggestion.empty() ? "; `gpusel catalog list` shows the ids"
                                                        : ", did you mean '" + suggestion + "'?"));
    }
    PerfQuery query;
    query.stack = *stack;
    if (!options.batch.empty()) {
        query.batch = parse_count_flag(options.batch, "--batch", 1, 1 << 20);
    }
    if (!options.micro_batch.empty()) {
        query.micro_batch = parse_count_flag(options.micro_batch, "--micro-batch", 1, 1 << 20);
    }
    const Workload workload = load_workload_file(options.workload, context.load_context());
    if (!options.batch.empty() && workload.is_training()) {
        throw UsageError("--batch applies to inference workloads; use --micro-batch for training");
    }
    if (!options.micro_batch.empty() && !workload.is_training()) {
        throw UsageError("--micro-batch applies to training workloads; use --batch for inference");
    }
    query.layout = layout_or_usage_error(fitting_layout(workload, *gpu, count, query.stack), count);
    const PerfEstimate estimate = estimate_perf(workload, *gpu, query, builtin_efficiency());
    if (options.format == "json") {
        context.out << dump_json(render_json(workload, *gpu, count, estimate));
    } else {
        render_table(workload, *gpu, count, estimate, context.quiet, context.out);
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
    command->add_option("--count", options->count, "Number of GPUs (default 1)")->type_name("N");
    command->add_option("--format", options->format, "Output format: table (default) or json")->type_name("FORMAT");
    command->add_option("--stack", options->stack,
                        "Software stack: auto (default: llama.cpp for GGUF weights, PyTorch eager for non-transformer "
                        "inference, else a TensorRT-LLM/vLLM-class engine), optimized, llama.cpp, eager")
        ->type_name("STACK");
    command->add_option("--batch", options->batch, "Inference: concurrent sequences per replica (overrides the file)")
        ->type_name("N");
    command->add_option("--micro-batch", options->micro_batch, "Training: samples per GPU per pass (overrides the file)")
        ->type_name("N");
    command->footer(
        "\nExamples:\n"
        "  gpusel perf examples/chat-llama2-13b-int4.yaml --gpu L40\n"
        "      TTFT, TPOT, throughput and P99 at the offered load, with the bottleneck\n"
        "  gpusel perf examples/chat-llama2-13b-int4.yaml --gpu H100-SXM5 --format json\n"
        "  gpusel perf train.yaml --gpu A100-80GB-SXM4 --count 16\n"
        "      step time, tokens/s, MFU and time to train over 16 GPUs (2 nodes of 8)\n"
        "\nThe model and its efficiency factors (with sources) are in docs/perf-model.md and\n"
        "data/efficiency.yaml. Throughputs are for all GPUs together; times are wall-clock.\n");
    command->callback([&context, options] { run_perf(context, *options); });
}

}  // namespace gpusel::cli
