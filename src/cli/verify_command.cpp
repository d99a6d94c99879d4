// gpusel verify SMI_Q_FILE (--expect ID | --plan PLAN_JSON [--role R] [--topology FILE] [--result FILE])
//               [--nvlink FILE] [--format text|json]

#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/context.hpp"
#include "cli/format_option.hpp"
#include "inputs/vllm_benchmark.hpp"
#include "inputs/workload.hpp"
#include "report/verify_render.hpp"
#include "verify/verify.hpp"

namespace gpusel::cli {

namespace {

struct VerifyOptions {
    std::string file;
    std::string expect;
    std::string nvlink;
    std::string plan;
    std::string role;
    std::string topology;
    std::string result;
    VerifyFormat format = VerifyFormat::text;
};

const GpuSpec& expected_gpu(Context& context, const std::string& id, const char* option) {
    const GpuSpec* expected = context.catalog().find(id);
    if (expected == nullptr) {
        const std::string suggestion = context.catalog().suggest(id);
        throw UsageError(fmt::format(
            "{}: unknown GPU '{}'{}", option, id,
            suggestion.empty() ? "; `gpusel catalog list` shows the ids" : ", did you mean '" + suggestion + "'?"));
    }
    if (expected->vendor != "nvidia") {
        throw UsageError(fmt::format("{}: {} is not an NVIDIA part (vendor {}); verify reads nvidia-smi -q reports",
                                     option, expected->id, expected->vendor));
    }
    return *expected;
}

void run_verify(Context& context, const VerifyOptions& options) {
    if (options.expect.empty() && options.plan.empty()) {
        throw UsageError("give --expect ID (the part ordered) or --plan PLAN_JSON (what gpusel plan picked)");
    }
    if (options.plan.empty()) {
        for (const auto& [option, value] :
             {std::pair{"--role", &options.role}, std::pair{"--topology", &options.topology},
              std::pair{"--result", &options.result}}) {
            if (!value->empty()) {
                throw UsageError(fmt::format("{} needs --plan", option));
            }
        }
    }
    int from_stdin = 0;
    for (const std::string* input :
         {&options.file, &options.nvlink, &options.plan, &options.topology, &options.result}) {
        from_stdin += *input == "-" ? 1 : 0;
    }
    if (from_stdin > 1) {
        throw UsageError("only one input can be read from standard input ('-')");
    }
    std::optional<PlanAssumption> plan;
    if (!options.plan.empty()) {
        const std::string plan_file = input_display_name(options.plan);
        // The telemetry reader: the same checks as every input, a limit that holds a plan of many
        // candidates, and a plain message for the UTF-16 that PowerShell's `>` writes.
        plan = read_plan_assumption(read_telemetry_file(options.plan), plan_file, options.role);
        if (!options.expect.empty() && !equals_ignore_case(options.expect, plan->gpu)) {
            throw UsageError(fmt::format("--expect {} contradicts the plan's pick {} (role {} in {}); give one of them",
                                         options.expect, plan->gpu, plan->role, plan_file));
        }
    }
    const GpuSpec& expected_spec =
        plan ? expected_gpu(context, plan->gpu, "--plan") : expected_gpu(context, options.expect, "--expect");
    const GpuSpec* expected = &expected_spec;
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
    VerifyResult result{verify_gpus(report, nvlink, *expected), file, expected->id, expected->name};
    if (plan) {
        std::optional<Topology> topology;
        if (!options.topology.empty()) {
            topology =
                parse_nvidia_smi_topo(read_telemetry_file(options.topology), input_display_name(options.topology));
        }
        Acceptance acceptance = accept_node(*plan, *expected, report, nvlink, topology ? &*topology : nullptr);
        if (!options.result.empty()) {
            const std::string result_file = input_display_name(options.result);
            if (acceptance.smoke.result_key.empty()) {
                throw UsageError(fmt::format(
                    "--result: verify judges vllm bench serve results only; the smoke test of role {} is {}",
                    plan->role, acceptance.smoke.kind.empty() ? "none" : "a GEMM probe, compared by hand"));
            }
            const VllmBenchmarkResult measured = parse_vllm_benchmark(read_telemetry_file(options.result), result_file);
            acceptance.result = judge_smoke_result(acceptance.smoke, measured.output_tokens_per_s, result_file);
        }
        result.verification.acceptance = std::move(acceptance);
    }
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
    command->add_option("--expect", options->expect, "Catalog id of the part that was ordered (or give --plan)")
        ->type_name("ID");
    command
        ->add_option("--plan", options->plan,
                     "gpusel plan --format json output: check the node against the pick it assumed")
        ->type_name("PLAN_JSON");
    command->add_option("--role", options->role, "The plan's role this node is for (when it plans several)")
        ->type_name("ROLE");
    command->add_option("--nvlink", options->nvlink, "nvidia-smi nvlink -s output, for the NVLink check")
        ->type_name("FILE");
    command
        ->add_option("--topology", options->topology,
                     "nvidia-smi topo -m output, for the plan's NVLink and NUMA placement (with --plan)")
        ->type_name("FILE");
    command
        ->add_option("--result", options->result,
                     "vllm bench serve --save-result JSON of the smoke test, judged against the plan's band")
        ->type_name("FILE");
    add_format_option(command, options->format,
                      FormatNames<VerifyFormat>{{"text", VerifyFormat::text}, {"json", VerifyFormat::json}},
                      "text or json");
    command->footer(
        "\nExamples:\n"
        "  nvidia-smi -q > node1.txt; nvidia-smi nvlink -s >> node1.txt\n"
        "  gpusel verify node1.txt --expect H100-SXM5\n"
        "  gpusel plan chat.yaml --format json -o plan.json\n"
        "  gpusel verify node1.txt --plan plan.json --topology topo.txt      # prints the smoke test\n"
        "  gpusel verify node1.txt --plan plan.json --result smoke.json      # judges its result\n"
        "Exit code 1 when a check fails. Checks and tolerances: docs/diagnose.md\n");
    command->callback([&context, options] { run_verify(context, *options); });
}

}  // namespace gpusel::cli
