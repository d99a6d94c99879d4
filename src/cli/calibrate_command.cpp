// gpusel calibrate FILE... [--gpu ID] [--count N] [--batch N] [-o out.yaml]: measurements users
// already have, read into a calibration file that plan, perf and memory take with --calibration.

#include <memory>

#include <fmt/format.h>

#include "base/error.hpp"
#include "calibrate/calibrate.hpp"
#include "cli/context.hpp"
#include "io/output.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel::cli {

namespace {

struct CalibrateOptions {
    std::vector<std::string> files;
    std::string gpu;
    std::string count;
    std::string batch;
    std::string output;
};

void run_calibrate(Context& context, const CalibrateOptions& options) {
    MeasurementContext measured;
    if (!options.gpu.empty()) {
        const GpuSpec* gpu = context.catalog().find(options.gpu);
        if (gpu == nullptr) {
            const std::string suggestion = context.catalog().suggest(options.gpu);
            throw UsageError(fmt::format(
                "--gpu: unknown GPU '{}'{}", options.gpu,
                suggestion.empty() ? "; `gpusel catalog list` shows the ids" : ", did you mean '" + suggestion + "'?"));
        }
        measured.gpu = gpu->id;
    }
    if (!options.count.empty()) {
        measured.count = parse_count_flag(options.count, "--count", 1, 1 << 20);
    }
    if (!options.batch.empty()) {
        measured.batch = parse_count_flag(options.batch, "--batch", 1, 1 << 20);
    }
    int from_stdin = 0;
    for (const std::string& file : options.files) {
        from_stdin += file == "-" ? 1 : 0;
    }
    if (from_stdin > 1) {
        throw UsageError("only one input can be read from standard input ('-')");
    }
    std::vector<std::string> inputs = options.files;
    const std::vector<std::string> option_files = context.option_input_files();
    inputs.insert(inputs.end(), option_files.begin(), option_files.end());
    const OutputTarget target{options.output, context.force, inputs};
    check_output_target(target);

    std::vector<MeasuredSource> sources;
    for (const std::string& file : options.files) {
        sources.push_back(read_measurement(read_telemetry_file(file), input_display_name(file), measured));
    }
    bool any_point = false;
    for (const MeasuredSource& source : sources) {
        any_point = any_point || !source.speed.empty() || !source.memory.empty() || !source.serving_memory.empty();
    }
    if (!any_point) {
        std::string why;
        for (const MeasuredSource& source : sources) {
            for (const std::string& note : source.notes) {
                why += fmt::format("\n  {}: {}", source.path, note);
            }
        }
        throw UsageError(
            fmt::format("the files measured nothing a calibration point can hold (a speed, or a "
                        "training step's allocated peak); nothing was written{}",
                        why));
    }
    write_output(target, calibration_file_yaml(sources), context.out);
}

}  // namespace

void register_calibrate(CLI::App& app, Context& context) {
    auto options = std::make_shared<CalibrateOptions>();
    CLI::App* command = app.add_subcommand(
        "calibrate", "Read benchmark results, metrics and logs into a calibration file for plan, perf and memory");
    command->add_option("files", options->files, "Measurement files, format detected from content ('-' = stdin)")
        ->required()
        ->type_name("FILE");
    command
        ->add_option("--gpu", options->gpu,
                     "Catalog id of the GPU the measurements ran on (the files rarely say; required for points)")
        ->type_name("ID");
    command
        ->add_option("--count", options->count,
                     "GPUs that served or trained together, where the file does not say (default 1)")
        ->type_name("N");
    command
        ->add_option("--batch", options->batch,
                     "Concurrent sequences per replica (inference) or micro-batch (training), where the file "
                     "does not say; --batch 1 marks a scrape taken at one request at a time")
        ->type_name("N");
    command->add_option("-o,--output", options->output, "Write to FILE (whole or not at all; --force to replace)")
        ->type_name("FILE");
    command->footer(
        "\nExamples:\n"
        "  vllm bench serve ... --max-concurrency 16 --save-result --result-filename c16.json\n"
        "  gpusel calibrate c16.json --gpu H100-SXM5 -o measured.yaml\n"
        "  gpusel plan examples/smart-support.yaml --calibration measured.yaml\n"
        "  gpusel calibrate sglang.jsonl trtllm-report.txt --gpu A100-80GB-SXM4 --count 2\n"
        "  curl -s localhost:8000/metrics > m.txt; gpusel calibrate m.txt --gpu L40S --batch 1\n"
        "  gpusel calibrate trainer_state.json --gpu A100-80GB-SXM4 --count 8\n"
        "  gpusel calibrate vllm-startup.log --gpu H100-SXM5 -o memory.yaml\n"
        "\nReads: vllm bench serve --save-result JSON; SGLang bench_serving --output-file JSONL;\n"
        "trtllm-bench throughput reports; vLLM/SGLang /metrics scrapes; Hugging Face Trainer\n"
        "trainer_state.json or its log line; Megatron-LM logs; torchtune and Lightning logs;\n"
        "torch.cuda.memory_summary() and max_memory_allocated printouts; vLLM start-up logs\n"
        "(calibration.serving_memory); GPU telemetry (nvidia-smi dmon, dcgmi dmon, --query-gpu CSV,\n"
        "DCGM exporter: notes only). Output throughput becomes a point at the\n"
        "run's concurrency; TTFT and TPOT only from runs at one request at a time. The file is the\n"
        "`calibration:` block of a workload, with where each point came from (docs/calibrate.md).\n");
    command->callback([&context, options] { run_calibrate(context, *options); });
}

}  // namespace gpusel::cli
