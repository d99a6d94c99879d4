// gpusel report FILE -o report.html: the plan as one self-contained HTML page with charts.

#include <fmt/format.h>

#include "base/error.hpp"
#include "cli/context.hpp"
#include "io/output.hpp"
#include "plan/plan.hpp"
#include "report/html_report.hpp"

namespace gpusel::cli {

namespace {

struct ReportFlags {
    std::string file;
    std::string output;
    std::string top = "5";
};

void run_report(const ReportFlags& flags, Context& context) {
    PlanOptions options;
    options.top = static_cast<std::size_t>(parse_count_flag(flags.top, "--top", 1, 1000));
    OutputTarget target{flags.output, context.force, {}};
    // Refuses a bad target (an input, an existing file without --force, a missing folder)
    // before the planner runs, not after.
    const Project project = load_plan_input_for_output(context, flags.file, target);
    const PlanReport report = make_plan(project, context.catalog(), builtin_efficiency(), options);
    write_output(target, render_plan_html(report), context.out);
    if (!context.quiet && !target.is_standard_output()) {
        std::size_t charts = 0;
        for (const RolePlan& role : report.roles) {
            charts += role.ranked.empty() ? 0U : 3U;
            charts += role.fleet && !role.fleet->hours.empty() ? 2U : 0U;  // capacity by hour, utilisation by month
        }
        context.err << fmt::format("gpusel: wrote {} ({} role{}, {} charts); open it in a browser or print it on A4\n",
                                   target.display_name(), report.roles.size(), report.roles.size() == 1 ? "" : "s",
                                   charts);
    }
}

}  // namespace

void register_report(CLI::App& app, Context& context) {
    auto flags = std::make_shared<ReportFlags>();
    CLI::App* command = app.add_subcommand(
        "report", "The plan as one self-contained HTML page: tables, Pareto scatter, memory and cost charts");
    command->add_option("file", flags->file, "Workload or project file ('-' reads standard input)")
        ->required()
        ->type_name("FILE");
    command
        ->add_option("-o,--output", flags->output,
                     "Write the HTML to FILE (required; '-' for standard output; whole or not at all; --force "
                     "to replace)")
        ->required()
        ->type_name("FILE");
    command->add_option("--top", flags->top, "Ranked candidates shown and charted per role (default 5)")
        ->type_name("N");
    command->footer(
        "\nExamples:\n"
        "  gpusel report examples/smart-support.yaml -o smart-support.html\n"
        "  gpusel report examples/chat-llama2-13b-int4.yaml -o chat.html --top 8\n"
        "  gpusel --force report examples/smart-support.yaml -o smart-support.html   (replace it)\n"
        "  gpusel report examples/smart-support.yaml -o - > smart-support.html\n"
        "\nThe page needs no network: styles and SVG charts are inline. It prints on A4, one role per page.");
    command->callback([flags, &context] { run_report(*flags, context); });
}

}  // namespace gpusel::cli
