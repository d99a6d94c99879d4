// gpusel plan FILE: ranked candidates per role and the procurement table.

#include <cstdlib>
#include <ctime>
#include <sstream>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/context.hpp"
#include "cli/format_option.hpp"
#include "io/output.hpp"
#include "plan/plan.hpp"
#include "report/render.hpp"

namespace gpusel::cli {

namespace {

struct PlanFlags {
    std::string file;
    PlanFormat format = PlanFormat::table;
    std::string output;
    std::string top = "5";
    std::string objective;
    std::string calibration;
    bool fail_if_none = false;
    bool show_rejected = false;
    bool excel = false;
};

constexpr std::pair<Objective, std::string_view> objective_names[] = {
    {Objective::tco, "tco"},
    {Objective::time, "time"},
    {Objective::latency, "latency"},
    {Objective::throughput_per_usd, "throughput-per-usd"},
    {Objective::energy, "energy"}};

Objective parse_objective(const std::string& text) {
    std::vector<std::string> names;
    for (const auto& [value, name] : objective_names) {
        if (name == text) {
            return value;
        }
        names.emplace_back(name);
    }
    throw UsageError(
        fmt::format("--objective: '{}' is not one of {}{}", text, fmt::join(names, ", "), did_you_mean(text, names)));
}

std::size_t terminal_width() {
    const char* columns = std::getenv("COLUMNS");
    if (columns != nullptr) {
        const int width = std::atoi(columns);
        if (width >= 40 && width <= 1000) {
            return static_cast<std::size_t>(width);
        }
    }
    return 100;
}

void run_plan(const PlanFlags& flags, Context& context) {
    PlanOptions options;
    options.top = static_cast<std::size_t>(parse_count_flag(flags.top, "--top", 1, 1000));
    if (!flags.objective.empty()) {
        options.objective = parse_objective(flags.objective);
    }
    OutputTarget target{flags.output, context.force, {}};
    if (flags.format == PlanFormat::xlsx && target.is_standard_output()) {
        throw UsageError("--format xlsx writes a binary workbook: give -o FILE.xlsx");
    }
    if (!flags.calibration.empty()) {
        target.inputs.push_back(flags.calibration);  // never overwritten by -o
    }
    Project project = load_plan_input_for_output(context, flags.file, target);
    apply_calibration_option(context, flags.calibration, project);
    const PlanReport report = make_plan(project, context.catalog(), builtin_efficiency(), options);

    std::string content;
    if (flags.format == PlanFormat::xlsx) {
        XlsxOptions xlsx_options;
        // Reproducible builds convention: a fixed creation time makes the workbook byte-stable.
        if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch != nullptr) {
            xlsx_options.created =
                static_cast<std::time_t>(parse_count_flag(epoch, "SOURCE_DATE_EPOCH", 0, 2147483647));
        }
        content = render_plan_xlsx(report, xlsx_options);
    } else {
        std::ostringstream text;
        if (flags.format == PlanFormat::table) {
            TerminalStyle style;
            style.width = terminal_width();
            style.color = context.color() && target.is_standard_output();
            PlanTableOptions table_options;
            table_options.show_rejected = flags.show_rejected;
            table_options.quiet = context.quiet;
            render_plan_table(report, text, style, table_options);
        } else if (flags.format == PlanFormat::markdown) {
            render_plan_markdown(report, text);
        } else if (flags.format == PlanFormat::json) {
            render_plan_json(report, text);
        } else {
            CsvOptions csv_options;
            csv_options.byte_order_mark = flags.excel;
            if (flags.format == PlanFormat::cash_flow_csv) {
                render_plan_cash_flow_csv(report, text, csv_options);
            } else {
                render_plan_csv(report, text, csv_options);
            }
        }
        content = text.str();
    }
    write_output(target, content, context.out);
    if (flags.fail_if_none) {
        for (const RolePlan& role : report.roles) {
            if (!role.winner) {
                context.err << fmt::format("gpusel: nothing feasible for role {} ({})\n", to_string(role.role),
                                           role.workload.name);
                context.exit_code = 1;
            }
        }
    }
}

}  // namespace

void register_plan(CLI::App& app, Context& context) {
    auto flags = std::make_shared<PlanFlags>();
    CLI::App* command =
        app.add_subcommand("plan", "Ranked GPU candidates per role, the rejected with why, and a procurement table");
    command->add_option("file", flags->file, "Workload or project file ('-' reads standard input)")
        ->required()
        ->type_name("FILE");
    add_format_option(command, flags->format,
                      FormatNames<PlanFormat>{{"table", PlanFormat::table},
                                              {"markdown", PlanFormat::markdown},
                                              {"json", PlanFormat::json},
                                              {"csv", PlanFormat::csv},
                                              {"cashflow-csv", PlanFormat::cash_flow_csv},
                                              {"xlsx", PlanFormat::xlsx}},
                      "table (default), markdown, json, csv, cashflow-csv (month by month) or xlsx");
    command->add_option("-o,--output", flags->output, "Write to FILE (whole or not at all; --force to replace)")
        ->type_name("FILE");
    command->add_option("--top", flags->top, "Ranked candidates shown per role (default 5)")->type_name("N");
    command
        ->add_option("--objective", flags->objective,
                     "Override the workloads' objective: tco, time, latency, throughput-per-usd, energy")
        ->type_name("O");
    add_calibration_option(command, flags->calibration);
    command->add_flag("--fail-if-none", flags->fail_if_none, "Exit 1 when a role has no feasible candidate");
    command->add_flag("--show-rejected", flags->show_rejected, "List every rejected GPU with its reason");
    command->add_flag("--excel", flags->excel, "CSV: start with a UTF-8 byte order mark for Excel");
    command->footer(
        "\nExamples:\n"
        "  gpusel plan examples/smart-support.yaml\n"
        "  gpusel plan examples/chat-llama2-13b-int4.yaml --objective latency --top 10\n"
        "  gpusel plan examples/smart-support.yaml --format csv -o purchase.csv        (finance)\n"
        "  gpusel plan examples/smart-support.yaml --format cashflow-csv -o cash.csv   (month by month)\n"
        "  gpusel plan examples/smart-support.yaml --format xlsx -o plan.xlsx\n"
        "  gpusel plan examples/smart-support.yaml --format markdown > comment.md      (pull request)\n"
        "  gpusel plan examples/scale/llama-405b-pretrain.yaml    (405B on up to 16,384 GPUs)\n"
        "  gpusel plan examples/smart-support.yaml --calibration measured.yaml   (gpusel calibrate wrote it)\n"
        "\nDefaults that shaped the answer are listed under Assumptions; set them in the file to change them.\n"
        "Training layouts are searched exhaustively (precision, recompute, tensor/pipeline/data parallel,\n"
        "ZeRO, micro-batch; lists and ranges in the workload widen the search); the output says how many\n"
        "points were evaluated and how many the provably safe pruning skipped (docs/performance.md).\n"
        "GPUs are bought and rented as the catalog's offers sell them: whole units (a card, an 8-GPU server,\n"
        "a 72-GPU rack, an instance type) with the price's kind and date; ~ marks an estimate. Restrict\n"
        "them with constraints.providers, tiers, regions, acquisitions, allow_estimates (docs/catalog.md);\n"
        "the CSV's last row (role total) sums the money columns (docs/cost-model.md).\n"
        "Each role ends with its robustness: the share of 400 seeded scenarios (speed, price and memory\n"
        "bands) in which the pick stays best and still meets every constraint, the candidates tied with it,\n"
        "and the values of horizon, utilisation, energy price, prices, load, dataset, runs and SLO at which\n"
        "another candidate wins (JSON robustness and sensitivity; docs/cost-model.md, Robustness).");
    command->callback([flags, &context] { run_plan(*flags, context); });
}

}  // namespace gpusel::cli
