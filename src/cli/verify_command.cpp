// gpusel verify SMI_Q_FILE --expect ID [--nvlink FILE] [--format text|json]

#include <memory>

#include <fmt/format.h>

#include "base/error.hpp"
#include "cli/context.hpp"
#include "cli/format_option.hpp"
#include "report/verify_render.hpp"
#include "verify/verify.hpp"

namespace gpusel::cli {

namespace {

struct VerifyOptions {
    std::string file;
    std::string expect;
    std::string nvlink;
    VerifyFormat format = VerifyFormat::text;
};

void run_verify(Context& context, const VerifyOptions& options) {
    const GpuSpec* expected = context.catalog().find(options.expect);
    if (expected == nullptr) {
        const std::string suggestion = context.catalog().suggest(options.expect);
        throw UsageError(fmt::format(
            "--expect: unknown GPU '{}'{}", options.expect,
            suggestion.empty() ? "; `gpusel catalog list` shows the ids" : ", did you mean '" + suggestion + "'?"));
    }
    if (expected->vendor != "nvidia") {
        throw UsageError(
            fmt::format("--expect: {} is not an NVIDIA part (vendor {}); verify reads nvidia-smi -q reports",
                        expected->id, expected->vendor));
    }
    if (options.file == "-" && options.nvlink == "-") {
        throw UsageError("only one input can be read from standard input ('-')");
    }
    const std::string file = input_display_name(options.file);
    const std::string text = read_telemetry_file(options.file);
    const SmiReport report = parse_nvidia_smi_q(text, file);
    // nvlink -s output may be appended to the report, or come in its own file.
    std::vector<NvlinkGpu> nvlink = parse_nvidia_smi_nvlink(text, file);
    if (!options.nvlink.empty()) {
        const std::string nvlink_file = input_display_name(options.nvlink);
        nvlink = parse_nvidia_smi_nvlink(read_telemetry_file(options.nvlink), nvlink_file);
        if (nvlink.empty()) {
            throw InputError(Diagnostic{
                nvlink_file, {1, 1}, {}, "no 'GPU N: ... (UUID: ...)' line; expected `nvidia-smi nvlink -s` output"});
        }
    }
    const VerifyResult result{verify_gpus(report, nvlink, *expected), file, expected->id, expected->name};
    if (options.format == VerifyFormat::json) {
        render_verify_json(result, context.out);
    } else {
        render_verify_text(result, context.out, VerifyStyle{context.quiet});
    }
    if (!result.verification.passed()) {
        context.exit_code = 1;
    }
}

}  // namespace

void register_verify(CLI::App& app, Context& context) {
    auto options = std::make_shared<VerifyOptions>();
    CLI::App* command = app.add_subcommand("verify", "Acceptance checks of delivered GPUs against the catalog entry");
    command->add_option("file", options->file, "nvidia-smi -q output ('-' reads standard input)")
        ->required()
        ->type_name("SMI_Q_FILE");
    command->add_option("--expect", options->expect, "Catalog id of the part that was ordered")
        ->required()
        ->type_name("ID");
    command->add_option("--nvlink", options->nvlink, "nvidia-smi nvlink -s output, for the NVLink check")
        ->type_name("FILE");
    add_format_option(command, options->format,
                      FormatNames<VerifyFormat>{{"text", VerifyFormat::text}, {"json", VerifyFormat::json}},
                      "text or json");
    command->footer(
        "\nExamples:\n"
        "  nvidia-smi -q > node1.txt; nvidia-smi nvlink -s >> node1.txt\n"
        "  gpusel verify node1.txt --expect H100-SXM5\n"
        "Exit code 1 when a check fails. Checks and tolerances: docs/diagnose.md\n");
    command->callback([&context, options] { run_verify(context, *options); });
}

}  // namespace gpusel::cli
