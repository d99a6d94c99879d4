// gpusel diagnose [--dmon F] [--dcgm F] [--prom F] [--query F] [--cpu F] [--perf F] [--topo F]
//                 [--query-fields LIST] [--gpu ID] [--workload W] [--format text|json]

#include <memory>

#include <fmt/format.h>

#include "base/error.hpp"
#include "cli/context.hpp"
#include "cli/format_option.hpp"
#include "diagnose/diagnose.hpp"
#include "report/diagnose_render.hpp"

namespace gpusel::cli {

namespace {

struct DiagnoseOptions {
    std::string dmon, dcgm, prom, query, cpu, perf, topo;
    std::string query_fields;
    std::string gpu;
    std::string workload;
    DiagnoseFormat format = DiagnoseFormat::text;
};

void run_diagnose(Context& context, const DiagnoseOptions& options) {
    const std::vector<const std::string*> paths = {&options.dmon, &options.dcgm, &options.prom, &options.query,
                                                   &options.cpu,  &options.perf, &options.topo};
    std::size_t given = 0;
    std::size_t from_stdin = 0;
    for (const std::string* path : paths) {
        given += path->empty() ? 0U : 1U;
        from_stdin += *path == "-" ? 1U : 0U;
    }
    if (given == 0) {
        throw UsageError("diagnose needs at least one input: --dmon, --dcgm, --prom, --query, --cpu, --perf or --topo");
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
    DiagnoseResult result{diagnose(inputs), std::nullopt};
    if (!options.workload.empty()) {
        const Workload loaded = load_workload_file(options.workload, context.load_context());
        result.fix_worth =
            estimate_fix_worth(result.diagnosis, loaded, inputs.gpu, context.catalog(), builtin_efficiency());
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
        ->add_option("--gpu", options->gpu,
                     "Catalog id of the GPU, for memory size and PCIe link when the "
                     "telemetry lacks them")
        ->type_name("ID");
    command->add_option("--workload", options->workload, "Workload file: what each fix would be worth")->type_name("W");
    add_format_option(command, options->format,
                      FormatNames<DiagnoseFormat>{{"text", DiagnoseFormat::text}, {"json", DiagnoseFormat::json}},
                      "text or json");
    command->footer(
        "\nExamples:\n"
        "  gpusel diagnose --dmon dmon.log --cpu mpstat.log\n"
        "  gpusel diagnose --dcgm dcgm.log --topo topo.txt --format json\n"
        "Capture commands and what each verdict means: docs/diagnose.md\n");
    command->callback([&context, options] { run_diagnose(context, *options); });
}

}  // namespace gpusel::cli
