// gpusel diagnose [--dmon F] [--dcgm F] [--prom F] [--query F] [--cpu F] [--perf F] [--topo F]
//                 [--processes F] [--query-fields LIST] [--gpu ID] [--workload W]
//                 [--write-calibration FILE] [--format text|json]

#include <memory>

#include <fmt/format.h>

#include "base/error.hpp"
#include "cli/context.hpp"
#include "cli/format_option.hpp"
#include "diagnose/diagnose.hpp"
#include "io/output.hpp"
#include "report/diagnose_render.hpp"

namespace gpusel::cli {

namespace {

struct DiagnoseOptions {
    std::string dmon, dcgm, prom, query, cpu, perf, topo, processes;
    std::string query_fields;
    std::string gpu;
    std::string workload;
    std::string write_calibration;
    DiagnoseFormat format = DiagnoseFormat::text;
};

void run_diagnose(Context& context, const DiagnoseOptions& options) {
    const std::vector<const std::string*> paths = {&options.dmon, &options.dcgm, &options.prom, &options.query,
                                                   &options.cpu,  &options.perf, &options.topo, &options.processes};
    std::size_t given = 0;
    std::size_t from_stdin = 0;
    for (const std::string* path : paths) {
        given += path->empty() ? 0U : 1U;
        from_stdin += *path == "-" ? 1U : 0U;
    }
    if (given == 0) {
        throw UsageError(
            "diagnose needs at least one input: --dmon, --dcgm, --prom, --query, --cpu, --perf, --topo or --processes");
    }
    if (from_stdin > 1) {
        throw UsageError("only one input can be read from standard input ('-')");
    }
    if (!options.query_fields.empty() && options.query.empty()) {
        throw UsageError("--query-fields describes a --query file; pass --query too");
    }
    DiagnoseInputs inputs;
    if (!options.gpu.empty()) {
        inputs.gpu = context.catalog().find(options.gpu);
        if (inputs.gpu == nullptr) {
            const std::string suggestion = context.catalog().suggest(options.gpu);
            throw UsageError(fmt::format(
                "--gpu: unknown GPU '{}'{}", options.gpu,
                suggestion.empty() ? "; `gpusel catalog list` shows the ids" : ", did you mean '" + suggestion + "'?"));
        }
    }
    // A bad field list is a bad flag value (exit 2), checked before any file is read.
    std::vector<std::string> query_fields;
    if (!options.query_fields.empty()) {
        try {
            query_fields = split_query_fields(options.query_fields, "--query-fields");
        } catch (const InputError& error) {
            throw UsageError(format_diagnostic(error.diagnostics().front()));
        }
    }
    // The calibration file is refused (an input, an existing file without --force) before any
    // input is read, so that nothing is computed for an output that cannot be written.
    OutputTarget calibration_target{options.write_calibration, context.force, context.option_input_files()};
    if (!options.write_calibration.empty()) {
        if (calibration_target.is_standard_output()) {
            throw UsageError("--write-calibration needs a file name; the report goes to standard output");
        }
        for (const std::string* path : paths) {
            if (!path->empty()) {
                calibration_target.inputs.push_back(*path);
            }
        }
        if (!options.workload.empty()) {
            calibration_target.inputs.push_back(options.workload);
        }
        check_output_target(calibration_target);
    }
    std::optional<Workload> workload;
    if (!options.workload.empty()) {
        workload = load_workload_file(options.workload, context.load_context());
        inputs.workload = &*workload;
    }
    const EfficiencyTable efficiency = builtin_efficiency();
    inputs.efficiency = &efficiency;
    if (!options.dmon.empty()) {
        inputs.dmon = parse_nvidia_smi_dmon(read_telemetry_file(options.dmon), input_display_name(options.dmon));
    }
    if (!options.dcgm.empty()) {
        inputs.dcgm = parse_dcgmi_dmon(read_telemetry_file(options.dcgm), input_display_name(options.dcgm));
    }
    if (!options.prom.empty()) {
        inputs.prometheus = parse_prometheus(read_telemetry_file(options.prom), input_display_name(options.prom));
    }
    if (!options.query.empty()) {
        inputs.query =
            parse_nvidia_smi_query(read_telemetry_file(options.query), input_display_name(options.query), query_fields);
    }
    if (!options.cpu.empty()) {
        inputs.cpu = parse_cpu_report(read_telemetry_file(options.cpu), input_display_name(options.cpu));
    }
    if (!options.perf.empty()) {
        inputs.perf = parse_perf_report(read_telemetry_file(options.perf), input_display_name(options.perf));
    }
    if (!options.topo.empty()) {
        inputs.topology = parse_nvidia_smi_topo(read_telemetry_file(options.topo), input_display_name(options.topo));
    }
    if (!options.processes.empty()) {
        inputs.processes =
            parse_nvidia_smi_processes(read_telemetry_file(options.processes), input_display_name(options.processes));
    }
    DiagnoseResult result{diagnose(inputs), std::nullopt};
    if (workload) {
        result.fix_worth = estimate_fix_worth(result.diagnosis, *workload, inputs.gpu, context.catalog(), efficiency);
    }
    if (!options.write_calibration.empty()) {
        // Whole file or nothing (io/output.hpp), and before the report, so that a report on
        // standard output always means the file was written.
        write_output(calibration_target, calibration_yaml(result.diagnosis, inputs.gpu), context.out);
    }
    if (options.format == DiagnoseFormat::json) {
        render_diagnose_json(result, context.out);
    } else {
        render_diagnose_text(result, context.out, DiagnoseStyle{context.quiet});
    }
}

}  // namespace

void register_diagnose(CLI::App& app, Context& context) {
    auto options = std::make_shared<DiagnoseOptions>();
    CLI::App* command =
        app.add_subcommand("diagnose", "Find what a running job waits for, from GPU and host telemetry");
    command->add_option("--dmon", options->dmon, "nvidia-smi dmon log (e.g. -s put -o DT)")->type_name("FILE");
    command->add_option("--dcgm", options->dcgm, "dcgmi dmon -e ... log")->type_name("FILE");
    command
        ->add_option("--prom", options->prom,
                     "DCGM exporter metrics: a /metrics scrape, or a Prometheus query_range JSON export")
        ->type_name("FILE");
    command->add_option("--query", options->query, "nvidia-smi --query-gpu=... --format=csv log")->type_name("FILE");
    command
        ->add_option("--query-fields", options->query_fields,
                     "The --query-gpu field list, for a --query file captured with csv,noheader")
        ->type_name("LIST");
    command->add_option("--cpu", options->cpu, "Host CPU report: mpstat, sar -u or top -b")->type_name("FILE");
    command->add_option("--perf", options->perf, "perf report --stdio of the data-loading process")->type_name("FILE");
    command->add_option("--topo", options->topo, "nvidia-smi topo -m")->type_name("FILE");
    command
        ->add_option("--processes", options->processes,
                     "nvidia-smi (its process table) or --query-compute-apps CSV: detects a serving engine")
        ->type_name("FILE");
    command
        ->add_option("--gpu", options->gpu,
                     "Catalog id of the GPU, for memory size and PCIe link when the "
                     "telemetry lacks them")
        ->type_name("ID");
    command
        ->add_option("--workload", options->workload,
                     "Workload file: training or serving (and which engine), and what each fix would be worth")
        ->type_name("W");
    command
        ->add_option("--write-calibration", options->write_calibration,
                     "Write what the capture measured as a calibration: block (YAML); --force replaces a file")
        ->type_name("FILE");
    add_format_option(command, options->format,
                      FormatNames<DiagnoseFormat>{{"text", DiagnoseFormat::text}, {"json", DiagnoseFormat::json}},
                      "text or json");
    command->footer(
        "\nExamples:\n"
        "  gpusel diagnose --dmon dmon.log --cpu mpstat.log\n"
        "  gpusel diagnose --dcgm dcgm.log --topo topo.txt --format json\n"
        "  gpusel diagnose --query query.csv --processes smi.txt --workload chat.yaml --gpu H100-SXM5\n"
        "  gpusel diagnose --prom metrics.txt --gpu L40S --write-calibration measured.yaml\n"
        "Capture commands and what each verdict means: docs/diagnose.md\n");
    command->callback([&context, options] { run_diagnose(context, *options); });
}

}  // namespace gpusel::cli
